//! # Exercise: one decoding step with a key/value cache
//!
//! When a decoder generates token `t`, the keys and values of positions `0 .. t−1` are the ones it
//! computed at earlier steps (the causal mask kept them from changing). A cache keeps them; each step
//! appends the new position's key and value and lets the new query attend to all of them.
//!
//! * `past_keys`, `past_values`: `[batch, heads, t, head_dim]`, the cache;
//! * `query`, `key`, `value`: `[batch, heads, 1, head_dim]`, the new position's;
//! * return `(output, keys, values)`: `output` `[batch, heads, 1, head_dim]`, the attention of the new
//!   query over all `t + 1` positions, and the grown cache, `[batch, heads, t + 1, head_dim]` each.
//!
//! Chapter: `chapters/10-training.md` (the key/value cache). Check: `cargo anatomy exercises check cached_attention`.
#![allow(unused_variables)] // remove once the body is written
use tch::Tensor;

pub fn cached_attention(
    past_keys: &Tensor,
    past_values: &Tensor,
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
) -> (Tensor, Tensor, Tensor) {
    todo!("append the new key and value, then attend")
}
