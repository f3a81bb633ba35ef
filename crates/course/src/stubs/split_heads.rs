//! # Exercise: splitting the hidden axis into heads, and merging it back
//!
//! The fused multi-head attention computes all heads' queries with one linear map (`[batch, seq,
//! hidden]`) and then cuts the last axis into `num_heads` pieces of `head_dim = hidden / num_heads`:
//!
//! * `split_heads(x, num_heads)`: `[batch, seq, hidden]` → `[batch, num_heads, seq, head_dim]`, where head
//!   `h` of token `s` holds hidden units `h·head_dim .. (h+1)·head_dim` of that token;
//! * `merge_heads(x)`: the inverse, `[batch, num_heads, seq, head_dim]` → `[batch, seq, hidden]`.
//!
//! `view` only re-reads the same memory with a new shape; `transpose` swaps two axes. You need both —
//! in the right order. Chapter: `chapters/03-multi-head-attention.md`.
//! Check: `cargo anatomy exercises check split_heads`; hints: `exercises/hints/split_heads.md`.
#![allow(unused_variables)] // remove once the bodies are written
use tch::Tensor;

pub fn split_heads(x: &Tensor, num_heads: i64) -> Tensor {
    todo!("[batch, seq, hidden] → [batch, heads, seq, head_dim]")
}

pub fn merge_heads(x: &Tensor) -> Tensor {
    todo!("[batch, heads, seq, head_dim] → [batch, seq, hidden]")
}
