//! A plausible wrong answer to `causal_mask`; the grader must fail it.
//! expect: takes a boolean mask
//! mistake: unnamed
use tch::{Device, Kind, Tensor};

pub fn causal_mask(n: i64, device: Device) -> Tensor {
    Tensor::ones([n, n], (Kind::Float, device)).tril(0)
}

pub fn masked_softmax(scores: &Tensor, mask: &Tensor) -> Tensor {
    // The 0/1 mask handed to masked_fill as it is.
    scores.masked_fill(mask, f64::NEG_INFINITY).softmax(-1, Kind::Float)
}
