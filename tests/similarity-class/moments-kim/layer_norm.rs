use tch::{Kind, Tensor};

/// Normalises over the last axis with the first two moments: Var[x] = E[x²] − E[x]².
pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let mean = x.mean_dim(-1, true, Kind::Float); // E[x]
    let mean_of_squares = (x * x).mean_dim(-1, true, Kind::Float); // E[x²]
    let variance = &mean_of_squares - &mean * &mean;
    let normalised = (x - &mean) / (variance + eps).sqrt();
    normalised * weight + bias
}
