//! # Exercise: one attention head
//!
//! A head owns three linear maps (`d_model → head_dim`) that turn each token's hidden state into a
//! query, a key and a value; then it runs scaled dot-product attention on them.
//!
//! * `hidden_state`: `[batch, seq, d_model]`;
//! * `projections`: the head's `query`, `key` and `value` maps (apply one with `.forward(&x)`, from the
//!   `tch::nn::Module` trait);
//! * return `[batch, seq, head_dim]`: `softmax(q · kᵀ / √head_dim) · v`.
//!
//! Write the attention with tensor operations (the previous exercise), not with the crate's modules.
//! Chapter: `chapters/03-multi-head-attention.md`. Check: `cargo anatomy exercises check attention_head`.
#![allow(unused_variables)] // remove once the body is written
use tch::Tensor;

pub use transformer_anatomy::exercises::support::Projections;

pub fn attention_head(hidden_state: &Tensor, projections: &Projections) -> Tensor {
    todo!("project to q, k, v, then attend")
}
