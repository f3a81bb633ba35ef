//! A plausible wrong answer to `layer_norm`; the grader must fail it.
//! expect: ε is left out
use tch::{Kind, Tensor};

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let mean = x.mean_dim(-1, true, Kind::Float);
    let centred = x - &mean;
    let variance = (&centred * &centred).mean_dim(-1, true, Kind::Float);
    centred / variance.sqrt() * weight + bias
}
