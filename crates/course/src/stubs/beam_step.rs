//! # Exercise: one step of beam search
//!
//! Beam search keeps the `width` best partial outputs. At each step every beam `b` (with score
//! `scores[b]`, the sum of its tokens' log-probabilities so far) could be extended by every token `v`
//! of the vocabulary, giving the candidate score `scores[b] + log_probs[b][v]`. Keep the `width` best
//! candidates over **all** beams together.
//!
//! * `scores`: `[beams]`; `log_probs`: `[beams, vocab]`, the next token's log-probabilities per beam;
//! * return `(new_scores, beam, token)`, each `[width]`, best first: the candidate's score, the beam it
//!   extends (an `Int64` index) and the token it adds (`Int64`).
//!
//! Chapter: `chapters/10-training.md`. Check: `cargo anatomy exercises check beam_step`.
#![allow(unused_variables)] // remove once the body is written
use tch::Tensor;

pub fn beam_step(scores: &Tensor, log_probs: &Tensor, width: i64) -> (Tensor, Tensor, Tensor) {
    todo!("every beam × every token, then the best `width` of them")
}
