//! A plausible wrong answer to `layer_norm`: the "Transformer Deep Dive" lecture notes' code ported as it
//! is, σ from PyTorch's `std` (divided by n − 1) and ε added after the root. The grader must fail it, and
//! say that it is the notes' version.
//! expect: the lecture notes' version
use tch::{Kind, Tensor};

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let mean = x.mean_dim(-1, true, Kind::Float);
    let std = x.std_correction(-1, 1, true);
    (x - mean) / (std + eps) * weight + bias
}
