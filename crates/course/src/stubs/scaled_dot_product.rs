//! # Exercise: scaled dot-product attention
//!
//! The heart of every attention layer. Given queries `[batch, t, d]`, keys `[batch, s, d]` and values
//! `[batch, s, d_v]`:
//!
//! 1. scores: every query against every key, `q · kᵀ` → `[batch, t, s]` (`bmm` with the keys' last two
//!    axes swapped);
//! 2. scale them by `1/√d`, so that their spread does not grow with the head size and the softmax does
//!    not saturate;
//! 3. softmax so that each query's row of weights sums to 1 over the keys;
//! 4. output: the weighted sum of the values, `weights · v` → `[batch, t, d_v]`.
//!
//! Return `(output, weights)`. Write it with tensor operations, not with the crate's
//! `scaled_dot_product_attention` or libtorch's. Chapter: `chapters/02-self-attention.md`.
//! Check: `cargo anatomy exercises check scaled_dot_product`; hints: `exercises/hints/scaled_dot_product.md`.
#![allow(unused_variables)] // remove once the body is written
use tch::Tensor;

pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {
    todo!("scores, scale, softmax, weighted sum")
}
