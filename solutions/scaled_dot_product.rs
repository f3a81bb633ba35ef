//! Reference solution (see `exercises/scaled_dot_product.rs` for the task).
use tch::{Kind, Tensor};

pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {
    let d = *query.size().last().expect("a last axis") as f64;
    let scores = query.bmm(&key.transpose(1, 2)) / d.sqrt(); // [batch, t, s]
    let weights = scores.softmax(-1, Kind::Float); // each query's row sums to 1
    (weights.bmm(value), weights) // [batch, t, d_v]
}
