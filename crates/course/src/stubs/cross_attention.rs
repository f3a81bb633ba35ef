//! # Exercise: encoder-decoder attention (the chapter's homework)
//!
//! In a decoder layer, the second attention block lets every target position consult the source
//! sentence: its **queries come from the decoder**, its **keys and values from the encoder's output**.
//!
//! Implement one head of it:
//!
//! * `decoder_states`: `[batch, t, d_model]`, the decoder's hidden states (t target positions);
//! * `encoder_output`: `[batch, s, d_model]`, the encoder's output (s source positions);
//! * `projections`: the head's `query`, `key` and `value` linear maps (`d_model → head_dim`);
//! * `source_padding`: optionally `[batch, s]`, 1 for real source tokens and 0 for padding.
//!
//! Return `(output, weights)`: `output` is `[batch, t, head_dim]`, and `weights` is `[batch, t, s]` —
//! rectangular, one row per target position — holding the softmax of the scaled dot products
//! `q · kᵀ / √head_dim`, with padded source positions at exactly 0.
//!
//! Write it with tensor operations, not with the crate's attention modules.
//! Check: `cargo anatomy exercises check cross_attention`; hints: `exercises/hints/cross_attention.md`.
#![allow(unused_variables)] // remove once the body is written
use tch::Tensor;

pub use transformer_anatomy::exercises::support::Projections;

pub fn cross_attention(
    decoder_states: &Tensor,
    encoder_output: &Tensor,
    projections: &Projections,
    source_padding: Option<&Tensor>,
) -> (Tensor, Tensor) {
    todo!("queries from the decoder, keys and values from the encoder")
}
