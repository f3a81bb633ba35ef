//! expect: passed
//! The right values in a sparse (COO) layout: the grader reads a tensor's value, whatever its layout, so a
//! right answer passes however it is stored.
use tch::{Kind, Tensor};

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let mean = x.mean_dim(-1, true, Kind::Float);
    let variance = (x - &mean).square().mean_dim(-1, true, Kind::Float);
    ((x - mean) / (variance + eps).sqrt() * weight + bias).to_sparse_sparse_dim(3)
}
