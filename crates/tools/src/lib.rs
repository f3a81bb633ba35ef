//! # What the command line runs over the chapter
//!
//! The learner's crate is the chapter: its steps, the encoder-decoder, training, decoding, chapters 11 and
//! 12, and the pictures a notebook shows. What only the `anatomy` command runs over those steps lives
//! here: the tour ([`tour`], every step on one text, as `anatomy tour` prints it) and the bench ([`bench`],
//! each block timed against PyTorch on the same CPU, `anatomy bench`) and a trained checkpoint run on a
//! text ([`translate`], `anatomy translate`). None is part of a notebook's `:dep`.
pub mod bench;
pub mod gpu_check;
pub mod tour;
pub mod translate;
