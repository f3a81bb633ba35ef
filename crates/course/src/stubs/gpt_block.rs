//! # Exercise: one GPT block, attention and all
//!
//! A decoder-only block is the decoder layer without its cross-attention: masked self-attention, then
//! the feed-forward, each pre-layer-norm with a skip connection. This time write the attention too, so
//! that every step of chapters 2, 3 and 8 is in one function:
//!
//! 1. `h = norm_1(x)`; queries, keys and values are `query(h)`, `key(h)`, `value(h)`, each
//!    `[batch, t, d_model]`, cut into `parts.heads` heads: `[batch, heads, t, head_dim]`;
//! 2. scores `q · kᵀ / √head_dim` `[batch, heads, t, t]`; hide the future (position `i` may read only
//!    positions `≤ i`) by setting those scores to −∞ **before** the softmax; softmax over the keys;
//! 3. the weighted sum of the values, the heads put back side by side `[batch, t, d_model]`, then
//!    `output(…)`; add it to `x`;
//! 4. `x = x + feed_forward(norm_2(x))`.
//!
//! `x` is `[batch, t, d_model]` and so is the result. No dropout (evaluation). Chapter:
//! `chapters/11-gpt.md`. Check: `cargo anatomy exercises check gpt_block`; hints: `exercises/hints/gpt_block.md`.
#![allow(unused_variables)] // remove once the body is written
use tch::Tensor;

pub use transformer_anatomy::exercises::support::GptBlockParts;

pub fn gpt_block(x: &Tensor, parts: &GptBlockParts) -> Tensor {
    todo!("masked self-attention written out, then the feed-forward, each x + sublayer(norm(x))")
}
