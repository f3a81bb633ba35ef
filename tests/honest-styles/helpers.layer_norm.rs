//! Layer normalisation with helpers of the student's own, one of them named after the step it helps with
//! (`layer_norm_moments`): a name the file defines is the file's own, whatever words it holds.
use tch::{Kind, Tensor};

/// The mean and the biased variance of each token's vector.
fn layer_norm_moments(x: &Tensor) -> (Tensor, Tensor) {
    let mean = x.mean_dim(-1, true, Kind::Float);
    let variance = (x - &mean).square().mean_dim(-1, true, Kind::Float);
    (mean, variance)
}

struct LayerNormScale<'a> {
    weight: &'a Tensor,
    bias: &'a Tensor,
}

impl LayerNormScale<'_> {
    fn apply_layer_norm_scale(&self, normalised: Tensor) -> Tensor {
        normalised * self.weight + self.bias
    }
}

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let (mean, variance) = layer_norm_moments(x);
    let scale = LayerNormScale { weight, bias };
    scale.apply_layer_norm_scale((x - mean) / (variance + eps).sqrt())
}
