//! A plausible wrong answer to `layer_norm`; the grader must fail it.
//! expect: scale (weight) and shift (bias) are not applied
use tch::{Kind, Tensor};

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let mean = x.mean_dim(-1, true, Kind::Float);
    let var = x.var_correction(-1, 0, true);
    (x - mean) / (var + eps).sqrt()
}
