//! # Exercise: mask-aware mean pooling
//!
//! The book's head reads the `[CLS]` token. all-MiniLM-L6-v2 was trained differently: the vector that
//! stands for a text is the mean of its token vectors — over the real tokens only, since a batch pads
//! shorter texts with positions that mean nothing. Chapter 12's spam filter reads this vector.
//!
//! * `hidden_states`: `[batch, seq, hidden]`, the encoder's last hidden state;
//! * `attention_mask`: `[batch, seq]`, `int64`, 1 for a real token and 0 for padding;
//! * return `[batch, hidden]`: for each text, the sum of its real tokens' vectors divided by how many
//!   there are. A text with no real token must give 0, not NaN: divide by that count clamped to at
//!   least `1e-9`, as sentence-transformers does.
//!
//! Chapter: `chapters/12-spam-filter.md`, *One vector per message* (code: `src/classify/`).
//! Check: `cargo anatomy exercises check mean_pooling`; hints: `exercises/hints/mean_pooling.md`.
#![allow(unused_variables)] // remove once the body is written
use tch::Tensor;

pub fn mean_pooling(hidden_states: &Tensor, attention_mask: &Tensor) -> Tensor {
    todo!("leave the padding out of the sum and out of the count")
}
