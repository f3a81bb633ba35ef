//! # Decoding: turning a trained encoder-decoder into output text
//!
//! The model gives, for a source and the tokens written so far, a distribution over the next token.
//! Decoding decides what to write: [`greedy`](fn@greedy) takes the most probable token at every step;
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
pub use greedy::{greedy, Decoded, GreedyStep};

use anyhow::{ensure, Context, Result};
use tch::Tensor;

use crate::embeddings::check_ids;
use crate::encoder_decoder::{EncoderDecoder, POSITIONS};

/// What both decoders check before they start, so that a bad request is an error rather than a
/// LibTorch abort: source ids that the model can read, start and end ids in the target vocabulary, and
/// a length the positional table covers (the decoder's input grows to `max_new_tokens` positions).
fn check_request(
    model: &EncoderDecoder,
    source: &Tensor,
    start_id: i64,
    end_id: i64,
    max_new_tokens: i64,
) -> Result<()> {
    let config = &model.config;
    check_ids(source, config.source_vocab_size, config.max_len, POSITIONS).context("source ids")?;
    ensure!(max_new_tokens >= 1, "max_new_tokens is {max_new_tokens}: ask for at least one new token");
    ensure!(
        max_new_tokens <= config.max_len,
        "max_new_tokens {max_new_tokens} is more than the {} positions the positional encoding covers: ask for fewer",
        config.max_len
    );
    for (what, id) in [("start", start_id), ("end", end_id)] {
        ensure!((0..config.target_vocab_size).contains(&id), "the {what} id {id} is not a target token id");
        ensure!(id != config.pad_id, "the {what} id {id} is the padding id");
    }
    Ok(())
}

/// Tokens a decoder must never write next: padding and the start token. Their log-probabilities
/// become −∞, so neither greedy nor beam search can pick them.
pub(crate) fn forbid(log_probs: &Tensor, ids: &[i64]) -> Tensor {
    let ids = Tensor::from_slice(ids).to_device(log_probs.device());
    log_probs.index_fill(1, &ids, f64::NEG_INFINITY)
}
