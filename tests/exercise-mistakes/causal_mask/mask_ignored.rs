//! A plausible wrong answer to `causal_mask`; the grader must fail it.
//! expect: the mask is not applied
use tch::{Device, Kind, Tensor};

pub fn causal_mask(n: i64, device: Device) -> Tensor {
    Tensor::ones([n, n], (Kind::Float, device)).tril(0)
}

pub fn masked_softmax(scores: &Tensor, mask: &Tensor) -> Tensor {
    scores.softmax(-1, Kind::Float)
}
