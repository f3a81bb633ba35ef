//! # The decoder layer
//!
//! A decoder layer has three sub-layers. Masked self-attention lets each target position gather what
//! has been written so far (the causal mask hides what comes later). Encoder-decoder attention — the
//! chapter's homework — takes its queries from the decoder and its keys and values from the encoder's
//! output, so every target position can consult the whole source sentence; its weights are rectangular,
//! `[batch, target_len, source_len]`. A feed-forward layer finishes, as in the encoder. Each sub-layer
//! has a skip connection and a LayerNorm, placed as [`LayerNormPlacement`] says.
//!
//! Chapter section: [`chapters/08-decoder-and-masking.md`](../chapters/08-decoder-and-masking.md).
use std::borrow::Borrow;

use tch::nn::{self, Module, ModuleT};
use tch::Tensor;

use crate::config::BertConfig;
use crate::encoder_layer::LayerNormPlacement;
use crate::feed_forward::FeedForward;
use crate::fused_attention::FusedMultiHeadAttention;

/// Masked self-attention, encoder-decoder attention and feed-forward, each with a skip connection and a
/// LayerNorm. Parameters at `self_attn`, `cross_attn`, `intermediate`/`output` (the feed-forward) and
/// `self_attn_layer_norm`, `cross_attn_layer_norm`, `final_layer_norm` under the given path.
#[derive(Debug)]
pub struct TransformerDecoderLayer {
    pub self_attention: FusedMultiHeadAttention,
    pub cross_attention: FusedMultiHeadAttention,
    pub feed_forward: FeedForward,
    pub layer_norm_1: nn::LayerNorm,
    pub layer_norm_2: nn::LayerNorm,
    pub layer_norm_3: nn::LayerNorm,
    pub placement: LayerNormPlacement,
    dropout: f64,
}

/// What a decoder layer returns when asked for its attention weights.
#[derive(Debug)]
pub struct DecoderLayerOutput {
    /// `[batch, target_len, hidden]`
    pub hidden_state: Tensor,
    /// Masked self-attention weights, `[batch, heads, target_len, target_len]`.
    pub self_weights: Tensor,
    /// Encoder-decoder attention weights, `[batch, heads, target_len, source_len]`.
    pub cross_weights: Tensor,
}

impl TransformerDecoderLayer {
    /// `config` gives the sizes (`hidden_size`, heads, `intermediate_size`, dropout, activation).
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &BertConfig, placement: LayerNormPlacement) -> Self {
        let p = p.borrow();
        let ln = nn::LayerNormConfig { eps: config.layer_norm_eps, ..Default::default() };
        let h = config.hidden_size;
        TransformerDecoderLayer {
            self_attention: FusedMultiHeadAttention::new(p / "self_attn", config),
            cross_attention: FusedMultiHeadAttention::new(p / "cross_attn", config),
            feed_forward: FeedForward::new(p, config),
            layer_norm_1: nn::layer_norm(p / "self_attn_layer_norm", vec![h], ln),
            layer_norm_2: nn::layer_norm(p / "cross_attn_layer_norm", vec![h], ln),
            layer_norm_3: nn::layer_norm(p / "final_layer_norm", vec![h], ln),
            placement,
            dropout: config.hidden_dropout_prob,
        }
    }

    /// Runs the layer on the target states `x` `[batch, t, hidden]` and the encoder's output `memory`
    /// `[batch, s, hidden]`. `target_mask` broadcasts against `[batch, t, t]` (causal and padding),
    /// `source_mask` against `[batch, t, s]` (padding of the source, e.g. `[batch, 1, s]`).
    pub fn forward_with_weights(
        &self,
        x: &Tensor,
        memory: &Tensor,
        target_mask: Option<&Tensor>,
        source_mask: Option<&Tensor>,
        train: bool,
    ) -> DecoderLayerOutput {
        let self_attend = |h: &Tensor| self.self_attention.forward_with_weights(h, target_mask, train);
        let cross_attend = |h: &Tensor| self.cross_attention.forward_cross_with_weights(h, memory, source_mask, train);
        let (x, self_weights, cross_weights) = match self.placement {
            LayerNormPlacement::Pre => {
                let (a, self_weights) = self_attend(&self.layer_norm_1.forward(x));
                let x = x + a.dropout(self.dropout, train);
                let (c, cross_weights) = cross_attend(&self.layer_norm_2.forward(&x));
                let x = &x + c.dropout(self.dropout, train);
                let x = &x + self.feed_forward.forward_t(&self.layer_norm_3.forward(&x), train);
                (x, self_weights, cross_weights)
            }
            LayerNormPlacement::Post => {
                let (a, self_weights) = self_attend(x);
                let x = self.layer_norm_1.forward(&(x + a.dropout(self.dropout, train)));
                let (c, cross_weights) = cross_attend(&x);
                let x = self.layer_norm_2.forward(&(&x + c.dropout(self.dropout, train)));
                let x = self.layer_norm_3.forward(&(&x + self.feed_forward.forward_t(&x, train)));
                (x, self_weights, cross_weights)
            }
        };
        DecoderLayerOutput { hidden_state: x, self_weights, cross_weights } // hidden: [batch, t, hidden]
    }

    pub fn forward(
        &self,
        x: &Tensor,
        memory: &Tensor,
        target_mask: Option<&Tensor>,
        source_mask: Option<&Tensor>,
        train: bool,
    ) -> Tensor {
        self.forward_with_weights(x, memory, target_mask, source_mask, train).hidden_state
    }
}
