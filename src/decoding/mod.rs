//! # Decoding: turning a trained encoder-decoder into output text
//!
//! The model gives, for a source and the tokens written so far, a distribution over the next token.
//! Decoding decides what to write: [`greedy`] takes the most probable token at every step;
//! [`beam_search`] keeps the `k` most probable partial outputs and compares finished ones with a length
//! penalty. Both run on a [`StepDecoder`], which can keep a key/value cache so that each step costs one
//! position instead of the whole prefix.
//!
//! Chapter section: [`chapters/10-training.md`](../chapters/10-training.md).
pub mod beam;
pub mod cache;
pub mod greedy;

pub use beam::{beam_search, length_penalty, BeamNode, BeamOptions, BeamSearch, Hypothesis};
pub use cache::StepDecoder;
pub use greedy::{greedy, Decoded};

use tch::Tensor;

/// Tokens a decoder must never write next: padding and the start token. Their log-probabilities
/// become −∞, so neither greedy nor beam search can pick them.
pub(crate) fn forbid(log_probs: &Tensor, ids: &[i64]) -> Tensor {
    let ids = Tensor::from_slice(ids).to_device(log_probs.device());
    log_probs.index_fill(1, &ids, f64::NEG_INFINITY)
}
