//! # Exercise: layer normalization by hand
//!
//! Layer norm rescales each token's vector on its own: subtract the mean of its `hidden` entries, divide
//! by their standard deviation, then apply a learned scale and shift:
//!
//! `y = (x − mean) / √(variance + eps) · weight + bias`, mean and variance over the last axis.
//!
//! * `x`: `[batch, seq, hidden]`; `weight`, `bias`: `[hidden]`; return the shape of `x`.
//! * The variance is the *biased* one: the mean of the squared deviations (divide by n).
//!
//! Write it with tensor operations (`mean_dim`, `var_correction` or your own squares), not with
//! `layer_norm`. Chapter: `chapters/05-layer-norm-and-encoder-layer.md`.
//! Check: `cargo anatomy exercises check layer_norm`; hints: `exercises/hints/layer_norm.md`.
#![allow(unused_variables)] // remove once the body is written
use tch::Tensor;

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    todo!("normalize over the last axis, then scale and shift")
}
