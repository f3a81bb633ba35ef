//! # Exercise: the label-smoothed loss
//!
//! The 2017 paper does not train towards a one-hot target: it moves a small share ε of the probability
//! away from the right token. This course follows PyTorch's convention: the target distribution gives
//! `ε / V` to every one of the `V` tokens, and `1 − ε` more to the right one. The loss at a position is
//! the cross-entropy `−Σ q(v) · log p(v)` against that distribution, with `log p` from `log_softmax`.
//!
//! * `logits`: `[n, V]`, one row per target position; `targets`: `[n]` token ids;
//! * positions whose target is `pad` do not count;
//! * return a scalar: the mean over the positions that count.
//!
//! Write it with tensor operations, not with `cross_entropy_loss` or the crate's `label_smoothed_loss`.
//! Chapter: `chapters/10-training.md`. Check: `cargo anatomy exercises check label_smoothed_loss`.
#![allow(unused_variables)] // remove once the body is written
use tch::Tensor;

pub fn label_smoothed_loss(logits: &Tensor, targets: &Tensor, smoothing: f64, pad: i64) -> Tensor {
    todo!("smoothed targets, cross-entropy, mean over the non-padding positions")
}
