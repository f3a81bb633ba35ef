use tch::{Kind, Tensor};

/// The mean and the biased variance over the last axis, both kept as an axis of size one.
fn moments(t: &Tensor) -> (Tensor, Tensor) {
    let mean = t.mean_dim(-1, true, Kind::Float);
    let variance = (t - &mean).pow_tensor_scalar(2).mean_dim(-1, true, Kind::Float);
    (mean, variance)
}

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let (mean, variance) = moments(x);
    let standardized = (x - mean).divide(&(variance + eps).sqrt());
    standardized.multiply(weight).g_add(bias)
}
