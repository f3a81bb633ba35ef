//! # Exercise: the feed-forward layer
//!
//! After attention has mixed information across tokens, each token's vector goes through the same small
//! two-layer network on its own: `linear_2(GELU(linear_1(x)))`. `linear_1` widens `hidden →
//! intermediate` (4× in BERT; 1 536 in MiniLM), `linear_2` narrows it back.
//!
//! * `x`: `[batch, seq, hidden]`; return the same shape.
//! * GELU is BERT's activation, the exact form `x · Φ(x)` (`Tensor::gelu("none")`).
//! * Evaluation mode: no dropout.
//!
//! Chapter: `chapters/04-feed-forward.md` (which notes a slip in some copies of its listing).
//! Check: `cargo anatomy exercises check feed_forward`; hints: `exercises/hints/feed_forward.md`.
#![allow(unused_variables)] // remove once the body is written
use tch::nn;
use tch::Tensor;

pub fn feed_forward(x: &Tensor, linear_1: &nn::Linear, linear_2: &nn::Linear) -> Tensor {
    todo!("linear, GELU, linear")
}
