//! # Exercise: teacher forcing — the decoder's input
//!
//! In training, the decoder reads the right answer one step late: at position `i` it sees target tokens
//! `0 .. i−1` and must predict token `i`. So its input is the target shifted one place to the right,
//! behind a start token:
//!
//! * `targets`: `[batch, t]`, each row the target tokens, then `<eos>`, then padding (`pad`) to width `t`;
//! * return `[batch, t]`: position 0 holds `bos`; position `i > 0` holds `targets[i − 1]`; and where the
//!   target is padding, the input is padding too (so `<eos>` is never an input).
//!
//! Chapter: `chapters/10-training.md`. Check: `cargo anatomy exercises check shift_right`.
#![allow(unused_variables)] // remove once the body is written
use tch::Tensor;

pub fn shift_right(targets: &Tensor, bos: i64, pad: i64) -> Tensor {
    todo!("<bos> then the targets without their last token; padding stays padding")
}
