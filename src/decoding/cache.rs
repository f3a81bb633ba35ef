//! # Writing one token at a time, with or without a key/value cache
//!
//! A decoder writes its output token by token, and at every step the naive way runs the whole decoder on
//! everything written so far: step `t` recomputes the keys and values of positions `0..t` that step
//! `t − 1` had already computed. Because of the causal mask, those earlier positions never change, so
//! they can be kept: a *key/value cache* stores, per layer, the self-attention keys and values of every
//! position written so far, and the encoder-decoder attention's keys and values of the source, computed
//! once. Each step then embeds only the newest token and appends one row of keys and values per layer.
//! [`StepDecoder`] does either, so tests can check that both write exactly the same tokens.
//!
//! Chapter section: [`chapters/10-training.md`](../chapters/10-training.md).
use tch::nn::Module;
use tch::{Kind, Tensor};

use crate::encoder_decoder::EncoderDecoder;
use crate::masks::{decoder_mask, padding_mask};

/// One decoder layer's cache: `[k, heads, t, head_dim]` self-attention keys and values of the positions
/// written so far, and the source's `[k, heads, s, head_dim]` keys and values for encoder-decoder
/// attention.
#[derive(Debug)]
struct LayerCache {
    self_keys: Option<Tensor>,
    self_values: Option<Tensor>,
    cross_keys: Tensor,
    cross_values: Tensor,
}

/// Runs the decoder of an [`EncoderDecoder`] step by step for `k` sequences at once (a batch, or the
/// beams of a beam search), each starting from its own `<s>`.
#[derive(Debug)]
pub struct StepDecoder<'m> {
    model: &'m EncoderDecoder,
    /// The encoder's output `[k, s, d_model]` and the source's padding mask `[k, 1, s]`.
    memory: Tensor,
    source_mask: Tensor,
    /// Every token written so far, `<s>` first: `[k, t]`.
    written: Tensor,
    cache: Option<Vec<LayerCache>>,
}

impl<'m> StepDecoder<'m> {
    /// Encodes `source` `[k, s]` once. With `use_cache`, also computes every layer's encoder-decoder keys
    /// and values once.
    pub fn new(model: &'m EncoderDecoder, source: &Tensor, start_id: i64, use_cache: bool) -> Self {
        let _no_grad = tch::no_grad_guard();
        let source_mask = padding_mask(source, model.config.pad_id); // [k, 1, s]
        let memory = model.encode(source, Some(&source_mask), false); // [k, s, d_model]
        let k = source.size()[0];
        let written = Tensor::full([k, 1], start_id, (Kind::Int64, source.device()));
        let cache = use_cache.then(|| {
            model
                .decoder
                .layers
                .iter()
                .map(|layer| {
                    let (cross_keys, cross_values) = layer.cross_attention.keys_and_values(&memory);
                    LayerCache { self_keys: None, self_values: None, cross_keys, cross_values }
                })
                .collect()
        });
        StepDecoder { model, memory, source_mask, written, cache }
    }

    /// Everything written so far, `[k, t]`, `<s>` first.
    pub fn written(&self) -> &Tensor {
        &self.written
    }

    /// The log-probabilities `[k, V]` of the next token after what has been written.
    pub fn next_log_probs(&mut self) -> Tensor {
        let _no_grad = tch::no_grad_guard();
        let model = self.model;
        let t = self.written.size()[1];
        let last_state = match &mut self.cache {
            None => {
                // Recompute: the whole prefix through every layer, keep the last position.
                let target_mask = decoder_mask(&self.written, model.config.pad_id);
                let states = model
                    .decode(&self.memory, Some(&self.source_mask), &self.written, Some(&target_mask), false)
                    .hidden_state; // [k, t, d_model]
                states.narrow(1, t - 1, 1)
            }
            Some(cache) => {
                // Only the newest token, at position t - 1; earlier positions' keys and values are cached.
                let newest = self.written.narrow(1, t - 1, 1); // [k, 1]
                let mut x = model.target_embedding.embed(&newest, t - 1, false); // [k, 1, d_model]
                for (layer, c) in model.decoder.layers.iter().zip(cache.iter_mut()) {
                    x = layer.self_attention_residual.apply(&x, false, |h| {
                        let (k, v) = layer.self_attention.keys_and_values(h); // [k, heads, 1, head_dim]
                        let keys = match &c.self_keys {
                            Some(past) => Tensor::cat(&[past, &k], 2),
                            None => k,
                        };
                        let values = match &c.self_values {
                            Some(past) => Tensor::cat(&[past, &v], 2),
                            None => v,
                        };
                        // No causal mask: the one query is the newest position, which may see all of them.
                        let out = layer.self_attention.attend(h, &keys, &values, None, false).output;
                        (c.self_keys, c.self_values) = (Some(keys), Some(values)); // [k, heads, t, head_dim]
                        out
                    });
                    x = layer.cross_attention_residual.apply(&x, false, |h| {
                        layer
                            .cross_attention
                            .attend(h, &c.cross_keys, &c.cross_values, Some(&self.source_mask), false)
                            .output
                    });
                    x = layer.feed_forward_residual.apply(&x, false, |h| layer.feed_forward.forward(h));
                }
                match &model.decoder.final_layer_norm {
                    Some(ln) => ln.forward(&x),
                    None => x,
                }
            }
        };
        model.generate(&last_state).squeeze_dim(1) // [k, V]
    }

    /// Appends one token per sequence, `[k]`.
    pub fn push(&mut self, tokens: &Tensor) {
        self.written = Tensor::cat(&[&self.written, &tokens.view([-1, 1])], 1);
    }

    /// Keeps the sequences `rows` (`[k']` indices into the current `k`), in that order: how beam search
    /// follows the beams it keeps, several of which may descend from the same parent.
    pub fn select(&mut self, rows: &Tensor) {
        self.written = self.written.index_select(0, rows);
        self.memory = self.memory.index_select(0, rows);
        self.source_mask = self.source_mask.index_select(0, rows);
        if let Some(cache) = &mut self.cache {
            for c in cache {
                c.self_keys = c.self_keys.as_ref().map(|t| t.index_select(0, rows));
                c.self_values = c.self_values.as_ref().map(|t| t.index_select(0, rows));
                c.cross_keys = c.cross_keys.index_select(0, rows);
                c.cross_values = c.cross_values.index_select(0, rows);
            }
        }
    }
}
