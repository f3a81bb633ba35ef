//! # Exercise: the sinusoidal positional encoding
//!
//! The 2017 Transformer adds a fixed pattern to its token embeddings so that it can tell positions apart:
//!
//! ```text
//! PE[pos, 2i]     = sin(pos / 10000^(2i / d_model))
//! PE[pos, 2i + 1] = cos(pos / 10000^(2i / d_model))
//! ```
//!
//! Return the whole table, `[max_len, d_model]` (float, on `device`; `d_model` is even). Compute the
//! frequencies in log space, `exp(2i · -ln(10000) / d_model)`, and use tensor operations rather than
//! loops over positions. Not the crate's own `sinusoidal_positions`, please.
//! Check: `cargo anatomy exercises check sinusoidal_positions`; hints: `exercises/hints/sinusoidal_positions.md`.
#![allow(unused_variables)] // remove once the body is written
use tch::{Device, Tensor};

pub fn sinusoidal_positions(max_len: i64, d_model: i64, device: Device) -> Tensor {
    todo!("sines in the even dimensions, cosines in the odd ones")
}
