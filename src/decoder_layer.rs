//! # The decoder layer
//!
//! A decoder layer has three sub-layers. Masked self-attention lets each target position gather what
//! has been written so far (the causal mask hides what comes later). Encoder-decoder attention — the
//! chapter's homework — takes its queries from the decoder and its keys and values from the encoder's
//! output, so every target position can consult the whole source sentence; its weights are rectangular,
//! `[batch, target_len, source_len]`. A feed-forward layer finishes, as in the encoder. Each sub-layer
//! sits in a [`Residual`] block (skip connection and LayerNorm, placed as [`LayerConfig::placement`] says),
//! the same block the encoder layer uses.
//!
//! Chapter section: [`chapters/08-decoder-and-masking.md`](../chapters/08-decoder-and-masking.md).
use std::borrow::Borrow;

use tch::nn::{self, Module};
use tch::Tensor;

use crate::attention::{AttentionOutput, Pass};
use crate::config::LayerConfig;
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

/// One layer's key/value cache for writing one token at a time: the self-attention keys and values of
/// every position written so far (each step appends its own), and the encoder-decoder attention's keys
/// and values of the source (computed at the first step, then reused). Start with
/// `LayerCache::default()`; chapter 10 explains why the cached path gives the same numbers.
#[derive(Debug, Default)]
pub struct LayerCache {
    /// `[batch, heads, t, head_dim]` each.
    written: Option<(Tensor, Tensor)>,
    /// `[batch, heads, s, head_dim]` each.
    source: Option<(Tensor, Tensor)>,
}

impl LayerCache {
    /// Appends the newest positions' keys and values `[batch, heads, t_new, head_dim]` and returns all
    /// of them so far.
    fn append(&mut self, keys: Tensor, values: Tensor) -> (Tensor, Tensor) {
        let all = match &self.written {
            Some((k, v)) => (Tensor::cat(&[k, &keys], 2), Tensor::cat(&[v, &values], 2)),
            None => (keys, values),
        };
        self.written = Some((all.0.shallow_clone(), all.1.shallow_clone()));
        all
    }

    /// The source's keys and values, computed by `compute` the first time only.
    fn source(&mut self, compute: impl FnOnce() -> (Tensor, Tensor)) -> (Tensor, Tensor) {
        let (k, v) = self.source.get_or_insert_with(compute);
        (k.shallow_clone(), v.shallow_clone())
    }

    /// Keeps the sequences `rows` (`[k']` indices into the batch), in that order: how beam search follows
    /// the beams it keeps, several of which may descend from one parent.
    pub fn select(&mut self, rows: &Tensor) {
        for (k, v) in self.written.iter_mut().chain(self.source.iter_mut()) {
            (*k, *v) = (k.index_select(0, rows), v.index_select(0, rows));
        }
    }
}

/// Masked self-attention inside its residual block, the sub-layer that makes a decoder a decoder: with a
/// `cache`, `x` holds only the newest positions, whose keys and values join the cache before their
/// queries attend to everything written so far. A decoder layer runs it first; a decoder-only (GPT)
/// block runs it alone before its feed-forward (`gpt::GptBlock`).
pub fn masked_self_attention(
    attention: &FusedMultiHeadAttention,
    residual: &Residual,
    x: &Tensor,
    mask: Option<&Tensor>,
    pass: Pass,
    cache: Option<&mut LayerCache>,
) -> AttentionOutput {
    residual.apply(x, pass.train, |h| {
        let (q, keys, values) = attention.queries_keys_values(h); // [batch, heads, t_new, head_dim] each
        let (keys, values) = match cache {
            Some(cache) => cache.append(keys, values), // [batch, heads, t_all, head_dim]
            None => (keys, values),
        };
        attention.attend_heads(&q, &keys, &values, mask, pass)
    })
}

impl TransformerDecoderLayer {
    /// Builds every part from the one `config`: its sizes and its `placement`. Both attentions are the
    /// fused kind whatever `config.attention` says, since the decoder's cache works on fused projections.
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &LayerConfig) -> Self {
        let p = p.borrow();
        TransformerDecoderLayer {
            self_attention: FusedMultiHeadAttention::new(p / "self_attn", config),
            self_attention_residual: Residual::new(p / "self_attn_layer_norm", config),
            cross_attention: FusedMultiHeadAttention::new(p / "cross_attn", config),
            cross_attention_residual: Residual::new(p / "cross_attn_layer_norm", config),
            feed_forward: FeedForward::new(p, config),
            feed_forward_residual: Residual::new(p / "final_layer_norm", config),
        }
    }

    /// Runs the layer on the target states `x` `[batch, t, hidden]` and the encoder's output `memory`
    /// `[batch, s, hidden]`. `target_mask` broadcasts against `[batch, t, t_all]` (causal and padding),
    /// `source_mask` against `[batch, t, s]` (padding of the source, e.g. `[batch, 1, s]`).
    ///
    /// With a `cache`, `x` holds only the newest positions (`t_all` counts the cached ones too): their
    /// keys and values join the cache and their queries attend to everything written so far, while the
    /// source's keys and values are computed once. Without one, the same code runs on the whole target.
    pub fn forward(
        &self,
        x: &Tensor,
        memory: &Tensor,
        target_mask: Option<&Tensor>,
        source_mask: Option<&Tensor>,
        pass: impl Into<Pass>,
        mut cache: Option<&mut LayerCache>,
    ) -> DecoderLayerOutput {
        let pass = pass.into();
        let cross_attn = &self.cross_attention;
        let (attention, residual) = (&self.self_attention, &self.self_attention_residual);
        let written = masked_self_attention(attention, residual, x, target_mask, pass, cache.as_deref_mut());
        // Queries from the decoder; keys and values from the encoder's output.
        let consulted = self.cross_attention_residual.apply(&written.output, pass.train, |h| {
            let (keys, values) = match cache {
                Some(cache) => cache.source(|| cross_attn.keys_and_values(memory)),
                None => cross_attn.keys_and_values(memory), // [batch, heads, s, head_dim]
            };
            cross_attn.attention_over(h, &keys, &values, source_mask, pass)
        });
        let x = self.feed_forward_residual.apply(&consulted.output, pass.train, |h| self.feed_forward.forward(h));
        DecoderLayerOutput { hidden_state: x, self_weights: written.weights, cross_weights: consulted.weights }
    }
}
