//! expect: the variance is the unbiased one
//! mistake: unbiased_variance
//! Same student as tmpkeep.feed_forward.rs: a plain named mistake that writes nothing. It keeps its own
//! id and words, not the disk limit of the files an earlier check left.
use tch::{Kind, Tensor};

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let mean = x.mean_dim(-1, true, Kind::Float);
    let var = x.var_correction(-1, 1, true);
    (x - mean) / (var + eps).sqrt() * weight + bias
}
