//! expect: returned a nested tensor
//! Returns a nested tensor (rows of different lengths held as one): the grader's reading of its sizes once
//! failed and the cell said the code had exited or written to the grader's channel, none of which
//! happened. The reason now says what the answer is.
use tch::{Device, Kind, Tensor};

pub fn causal_mask(n: i64, device: Device) -> Tensor {
    let rows: Vec<i64> = (1..=n).collect();
    let buffer = Tensor::ones([rows.iter().sum::<i64>()], (Kind::Float, device));
    let sizes = Tensor::from_slice(&rows).view([n, 1]);
    let strides = Tensor::ones([n, 1], (Kind::Int64, Device::Cpu));
    let offsets = Tensor::from_slice(&rows.iter().scan(0, |at, r| { let start = *at; *at += r; Some(start) }).collect::<Vec<i64>>());
    buffer.internal_nested_view_from_buffer(&sizes, &strides, &offsets)
}

pub fn masked_softmax(scores: &Tensor, mask: &Tensor) -> Tensor {
    scores.masked_fill(&mask.eq(0), f64::NEG_INFINITY).softmax(-1, scores.kind())
}
