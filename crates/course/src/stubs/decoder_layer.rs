//! # Exercise: a decoder layer
//!
//! Assemble one **pre-layer-norm** decoder layer from its parts (given in `DecoderLayerParts`):
//!
//! 1. masked self-attention: `x = x + self_attention(norm_1(x))` with the causal/padding `target_mask`;
//! 2. encoder-decoder attention: `x = x + cross_attention(norm_2(x), memory)` with `source_mask`
//!    (queries from the decoder states, keys and values from `memory`, the encoder's output);
//! 3. feed-forward: `x = x + feed_forward(norm_3(x))`.
//!
//! Shapes: `x` `[batch, t, d_model]`, `memory` `[batch, s, d_model]`; the result is `[batch, t, d_model]`.
//! Run in evaluation mode (`Pass::EVAL`). The attention parts are `FusedMultiHeadAttention`s: look at
//! the one `forward(query_input, key_value_input, mask, pass)` call of the `Attention` trait. Check:
//! `cargo anatomy exercises check decoder_layer`; hints: `exercises/hints/decoder_layer.md`.
#![allow(unused_variables)] // remove once the body is written
use tch::Tensor;

pub use transformer_anatomy::exercises::support::DecoderLayerParts;

pub fn decoder_layer(
    x: &Tensor,
    memory: &Tensor,
    parts: &DecoderLayerParts,
    target_mask: &Tensor,
    source_mask: Option<&Tensor>,
) -> Tensor {
    todo!("self-attention, cross-attention, feed-forward, each with norm and skip connection")
}
