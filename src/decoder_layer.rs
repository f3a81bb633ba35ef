//! # The decoder layer
//!
//! A decoder layer has three sub-layers. Masked self-attention lets each target position gather what
//! has been written so far (the causal mask hides what comes later). Encoder-decoder attention — the
//! chapter's homework — takes its queries from the decoder and its keys and values from the encoder's
//! output, so every target position can consult the whole source sentence; its weights are rectangular,
//! `[batch, target_len, source_len]`. A feed-forward layer finishes, as in the encoder. Each sub-layer
//! sits in a [`Residual`] block (skip connection and LayerNorm, placed as [`LayerNormPlacement`] says),
//! the same block the encoder layer uses.
//!
//! Chapter section: [`chapters/08-decoder-and-masking.md`](../chapters/08-decoder-and-masking.md).
use std::borrow::Borrow;

use tch::nn::{self, Module};
use tch::Tensor;

use crate::attention::{Attention, Pass};
use crate::config::{LayerConfig, LayerNormPlacement};
use crate::feed_forward::FeedForward;
use crate::fused_attention::FusedMultiHeadAttention;
use crate::residual::Residual;

/// Masked self-attention, encoder-decoder attention and feed-forward, each in a [`Residual`] block.
/// Parameters at `self_attn`, `cross_attn`, `intermediate`/`output` (the feed-forward) and
/// `self_attn_layer_norm`, `cross_attn_layer_norm`, `final_layer_norm` under the given path.
#[derive(Debug)]
pub struct TransformerDecoderLayer {
    pub self_attention: FusedMultiHeadAttention,
    pub self_attention_residual: Residual,
    pub cross_attention: FusedMultiHeadAttention,
    pub cross_attention_residual: Residual,
    pub feed_forward: FeedForward,
    pub feed_forward_residual: Residual,
}

/// What a decoder layer returns.
#[derive(Debug)]
pub struct DecoderLayerOutput {
    /// `[batch, target_len, hidden]`
    pub hidden_state: Tensor,
    /// Masked self-attention weights, `[batch, heads, target_len, target_len]`, when the pass asked.
    pub self_weights: Option<Tensor>,
    /// Encoder-decoder attention weights, `[batch, heads, target_len, source_len]`, when the pass asked.
    pub cross_weights: Option<Tensor>,
}

impl TransformerDecoderLayer {
    /// `config` gives the sizes (a [`LayerConfig`], or a [`BertConfig`](crate::BertConfig)).
    pub fn new<'a>(
        p: impl Borrow<nn::Path<'a>>,
        config: impl Into<LayerConfig>,
        placement: LayerNormPlacement,
    ) -> Self {
        let (p, config) = (p.borrow(), config.into());
        TransformerDecoderLayer {
            self_attention: FusedMultiHeadAttention::new(p / "self_attn", &config),
            self_attention_residual: Residual::new(p / "self_attn_layer_norm", &config, placement),
            cross_attention: FusedMultiHeadAttention::new(p / "cross_attn", &config),
            cross_attention_residual: Residual::new(p / "cross_attn_layer_norm", &config, placement),
            feed_forward: FeedForward::new(p, &config),
            feed_forward_residual: Residual::new(p / "final_layer_norm", &config, placement),
        }
    }

    /// Runs the layer on the target states `x` `[batch, t, hidden]` and the encoder's output `memory`
    /// `[batch, s, hidden]`. `target_mask` broadcasts against `[batch, t, t]` (causal and padding),
    /// `source_mask` against `[batch, t, s]` (padding of the source, e.g. `[batch, 1, s]`).
    pub fn forward(
        &self,
        x: &Tensor,
        memory: &Tensor,
        target_mask: Option<&Tensor>,
        source_mask: Option<&Tensor>,
        pass: impl Into<Pass>,
    ) -> DecoderLayerOutput {
        let pass = pass.into();
        let (mut self_weights, mut cross_weights) = (None, None);
        let x = self.self_attention_residual.apply(x, pass.train, |h| {
            let attended = self.self_attention.forward(h, h, target_mask, pass);
            self_weights = attended.weights;
            attended.output
        });
        let x = self.cross_attention_residual.apply(&x, pass.train, |h| {
            let attended = self.cross_attention.forward(h, memory, source_mask, pass); // queries: decoder; keys, values: encoder
            cross_weights = attended.weights;
            attended.output
        });
        let x = self.feed_forward_residual.apply(&x, pass.train, |h| self.feed_forward.forward(h));
        DecoderLayerOutput { hidden_state: x, self_weights, cross_weights } // hidden: [batch, t, hidden]
    }
}
