//! expect: uses `layer_norm`, libtorch's finished normalisation
//! Calls libtorch's layer norm, which computes exactly what the exercise asks.
use tch::Tensor;

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let hidden = *x.size().last().expect("a last axis");
    x.layer_norm([hidden], Some(weight), Some(bias), eps, false)
}
