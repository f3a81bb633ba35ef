//! # The decoder
//!
//! A stack of [`TransformerDecoderLayer`]s, each reading the target states and the same encoder output.
//! With pre-layer-norm the stack's output has never been normalized, so a final LayerNorm closes it (as
//! in the annotated implementations of the 2017 model); with post-layer-norm every layer already ends in
//! one. [`StackConfig::final_layer_norm`] says which.
//!
//! Chapter section: [`chapters/08-decoder-and-masking.md`](../chapters/08-decoder-and-masking.md).
use std::borrow::Borrow;

use tch::nn::{self, Module};
use tch::Tensor;

use crate::attention::Pass;
use crate::config::StackConfig;
use crate::decoder_layer::{LayerCache, TransformerDecoderLayer};
use crate::encoder::final_layer_norm;

/// Decoder layers at `layer.{i}` and, when the config asks (pre-LN), a final `layer_norm`; the
/// counterpart of the encoder's [`EncoderStack`](crate::EncoderStack).
#[derive(Debug)]
pub struct TransformerDecoder {
    pub layers: Vec<TransformerDecoderLayer>,
    pub final_layer_norm: Option<nn::LayerNorm>,
}

/// What the decoder returns.
#[derive(Debug)]
pub struct DecoderOutput {
    /// `[batch, t, hidden]`
    pub hidden_state: Tensor,
    /// Per layer, `[batch, heads, t, t]`, when the pass asked for weights.
    pub self_attentions: Vec<Tensor>,
    /// Per layer, `[batch, heads, t, s]`, when the pass asked for weights.
    pub cross_attentions: Vec<Tensor>,
}

impl TransformerDecoder {
    /// `config.num_layers` layers built from `config.layer`, and a final LayerNorm if
    /// `config.final_layer_norm` (the encoder-decoder's [`Seq2SeqConfig::stack`](crate::Seq2SeqConfig::stack)
    /// sets it for pre-LN).
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &StackConfig) -> Self {
        let p = p.borrow();
        TransformerDecoder {
            layers: (0..config.num_layers)
                .map(|i| TransformerDecoderLayer::new(p / "layer" / i, &config.layer))
                .collect(),
            final_layer_norm: final_layer_norm(p, config),
        }
    }

    /// Target states `[batch, t, hidden]` and encoder output `[batch, s, hidden]` → `[batch, t, hidden]`.
    /// With a `cache` (one [`LayerCache`] per layer, see [`TransformerDecoder::new_cache`]), `x` holds
    /// only the newest positions and each layer keeps its keys and values for the next call.
    pub fn forward(
        &self,
        x: &Tensor,
        memory: &Tensor,
        target_mask: Option<&Tensor>,
        source_mask: Option<&Tensor>,
        pass: impl Into<Pass>,
        mut cache: Option<&mut [LayerCache]>,
    ) -> DecoderOutput {
        let pass = pass.into();
        let mut x = x.shallow_clone();
        let (mut self_attentions, mut cross_attentions) = (Vec::new(), Vec::new());
        for (i, layer) in self.layers.iter().enumerate() {
            let layer_cache = cache.as_deref_mut().map(|c| &mut c[i]);
            let out = layer.forward(&x, memory, target_mask, source_mask, pass, layer_cache);
            x = out.hidden_state;
            self_attentions.extend(out.self_weights);
            cross_attentions.extend(out.cross_weights);
        }
        if let Some(ln) = &self.final_layer_norm {
            x = ln.forward(&x);
        }
        DecoderOutput { hidden_state: x, self_attentions, cross_attentions }
    }

    /// An empty key/value cache, one [`LayerCache`] per layer.
    pub fn new_cache(&self) -> Vec<LayerCache> {
        self.layers.iter().map(|_| LayerCache::default()).collect()
    }
}
