//! A mask of booleans from comparing positions, and a softmax with the blocked scores set by `where`.
use tch::{Device, Kind, Tensor};

pub fn causal_mask(n: i64, device: Device) -> Tensor {
    let rows = Tensor::arange(n, (Kind::Int64, device)).unsqueeze(1); // [n, 1]
    let columns = Tensor::arange(n, (Kind::Int64, device)).unsqueeze(0); // [1, n]
    rows.ge_tensor(&columns) // [n, n]: row i sees columns 0..=i
}

pub fn masked_softmax(scores: &Tensor, mask: &Tensor) -> Tensor {
    let blocked = scores.full_like(f64::NEG_INFINITY);
    scores.where_self(&mask.ne(0), &blocked).softmax(-1, Kind::Float)
}
