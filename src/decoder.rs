//! # The decoder
//!
//! A stack of [`TransformerDecoderLayer`]s, each reading the target states and the same encoder output.
//! With pre-layer-norm the stack's output has never been normalized, so a final LayerNorm closes it (as
//! in the annotated implementations of the 2017 model); with post-layer-norm every layer already ends in
//! one.
//!
//! Chapter section: [`chapters/08-decoder-and-masking.md`](../chapters/08-decoder-and-masking.md).
use std::borrow::Borrow;

use tch::nn::{self, Module};
use tch::Tensor;

use crate::config::BertConfig;
use crate::decoder_layer::TransformerDecoderLayer;
use crate::encoder_layer::LayerNormPlacement;

/// Decoder layers at `layer.{i}` and, for pre-LN, a final `layer_norm`.
#[derive(Debug)]
pub struct TransformerDecoder {
    pub layers: Vec<TransformerDecoderLayer>,
    pub final_layer_norm: Option<nn::LayerNorm>,
}

impl TransformerDecoder {
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &BertConfig, placement: LayerNormPlacement) -> Self {
        let p = p.borrow();
        let layers = (0..config.num_hidden_layers)
            .map(|i| TransformerDecoderLayer::new(p / "layer" / i, config, placement))
            .collect();
        let ln = nn::LayerNormConfig { eps: config.layer_norm_eps, ..Default::default() };
        let final_layer_norm = (placement == LayerNormPlacement::Pre)
            .then(|| nn::layer_norm(p / "layer_norm", vec![config.hidden_size], ln));
        TransformerDecoder { layers, final_layer_norm }
    }

    /// Target states `[batch, t, hidden]` and encoder output `[batch, s, hidden]` → `[batch, t, hidden]`.
    pub fn forward(
        &self,
        x: &Tensor,
        memory: &Tensor,
        target_mask: Option<&Tensor>,
        source_mask: Option<&Tensor>,
        train: bool,
    ) -> Tensor {
        let x = self
            .layers
            .iter()
            .fold(x.shallow_clone(), |x, layer| layer.forward(&x, memory, target_mask, source_mask, train));
        match &self.final_layer_norm {
            Some(ln) => ln.forward(&x),
            None => x,
        }
    }
}
