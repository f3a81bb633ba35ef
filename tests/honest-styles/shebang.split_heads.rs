#!/usr/bin/env -S cargo +nightly -Zscript
//! A file that starts with a `#!` line, as a script would: rustc reads it as nothing, and so must the
//! grader. The heads are cut with reshape and permute rather than view and transpose.
use tch::Tensor;

pub fn split_heads(x: &Tensor, num_heads: i64) -> Tensor {
    let (batch, seq, hidden) = x.size3().expect("[batch, seq, hidden]");
    x.reshape([batch, seq, num_heads, hidden / num_heads]).permute([0, 2, 1, 3])
}

pub fn merge_heads(x: &Tensor) -> Tensor {
    let (batch, heads, seq, head_dim) = x.size4().expect("[batch, heads, seq, head_dim]");
    x.permute([0, 2, 1, 3]).reshape([batch, seq, heads * head_dim])
}
