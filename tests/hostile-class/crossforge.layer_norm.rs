//! expect: the variance is the unbiased one
//! The same student's wrong layer_norm (divided by n − 1), which crossforge.feed_forward.rs tries to
//! pass with frames forged in its own process: it must fail for its own mistake.
use tch::{Kind, Tensor};

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let mean = x.mean_dim(-1, true, Kind::Float);
    let var = x.var_correction(-1, 1, true);
    (x - mean) / (var + eps).sqrt() * weight + bias
}
