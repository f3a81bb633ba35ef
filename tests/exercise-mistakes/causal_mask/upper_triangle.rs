//! A plausible wrong answer to `causal_mask`; the grader must fail it.
//! expect: upper triangle (triu)
use tch::{Device, Kind, Tensor};

pub fn causal_mask(n: i64, device: Device) -> Tensor {
    Tensor::ones([n, n], (Kind::Float, device)).triu(0)
}

pub fn masked_softmax(scores: &Tensor, mask: &Tensor) -> Tensor {
    scores.masked_fill(&mask.eq(0), f64::NEG_INFINITY).softmax(-1, Kind::Float)
}
