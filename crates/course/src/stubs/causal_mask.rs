//! # Exercise: the causal mask
//!
//! A decoder must not look ahead: when it predicts token `i`, attention may use positions `0..=i` only.
//!
//! 1. `causal_mask(n, device)` returns an `[n, n]` float tensor with 1.0 on and below the diagonal and
//!    0.0 above it (row = query position, column = key position).
//! 2. `masked_softmax(scores, mask)` takes attention scores `[batch, n, n]` and such a mask, and returns
//!    attention weights `[batch, n, n]`: every future position gets weight **exactly** 0, and every row
//!    still sums to 1.
//!
//! Write it with tensor operations, not with the crate's own `causal_mask` or `masked_attention_weights`.
//! Check your work with `cargo anatomy exercises check causal_mask`; stuck? `exercises/hints/causal_mask.md`.
#![allow(unused_variables)] // remove once the bodies are written
use tch::{Device, Tensor};

pub fn causal_mask(n: i64, device: Device) -> Tensor {
    todo!("build the lower-triangular mask")
}

pub fn masked_softmax(scores: &Tensor, mask: &Tensor) -> Tensor {
    todo!("block the future, then softmax over the last axis")
}
