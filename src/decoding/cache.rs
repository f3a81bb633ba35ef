//! # Writing one token at a time, with or without a key/value cache
//!
//! A decoder writes its output token by token, and at every step the naive way runs the whole decoder on
//! everything written so far — every layer's queries, attention, feed-forward and norms for positions
//! `0..t` — and keeps only the last position's output. Because of the causal mask, those earlier
//! positions never change, and all a new token reads of them is, in each layer, their keys and values: a
//! *key/value cache* keeps exactly those, per layer, for every position written so far, and the
//! encoder-decoder attention's keys and values of the source, computed once. Each step then runs only the
//! newest token through the stack and appends one row of keys and values per layer.
//! The decoder layer does the caching itself ([`LayerCache`]); [`StepDecoder`] only drives it, with or
//! without a cache, so tests can check that both write exactly the same tokens.
//!
//! Chapter section: [`chapters/10-training.md`](../chapters/10-training.md).
use tch::{Kind, Tensor};

use crate::attention::Pass;
use crate::decoder_layer::LayerCache;
use crate::encoder_decoder::EncoderDecoder;
use crate::inference_mode::inference_mode_guard;
use crate::masks::{decoder_mask, padding_mask};

/// Runs the decoder of an [`EncoderDecoder`] step by step for `k` sequences at once (a batch, or the
/// beams of a beam search), each starting from its own `<s>`.
#[derive(Debug)]
pub struct StepDecoder<'m> {
    model: &'m EncoderDecoder,
    /// The encoder's output `[k, s, d_model]` and the source's padding mask `[k, 1, s]` (none when no
    /// source holds padding: nothing to hide, and two fewer operations per layer and step).
    memory: Tensor,
    source_mask: Option<Tensor>,
    /// Every token written so far, `<s>` first: `[k, t]`.
    written: Tensor,
    cache: Option<Vec<LayerCache>>,
}

impl<'m> StepDecoder<'m> {
    /// Encodes `source` `[k, s]` once; with `use_cache`, the decoder will keep its keys and values.
    pub fn new(model: &'m EncoderDecoder, source: &Tensor, start_id: i64, use_cache: bool) -> Self {
        let _inference = inference_mode_guard();
        let has_padding = source.eq(model.config.pad_id).any().int64_value(&[]) != 0;
        let source_mask = has_padding.then(|| padding_mask(source, model.config.pad_id)); // [k, 1, s]
        let memory = model.encode(source, source_mask.as_ref(), false); // [k, s, d_model]
        let written = Tensor::full([source.size()[0], 1], start_id, (Kind::Int64, source.device()));
        let cache = use_cache.then(|| model.decoder.new_cache());
        StepDecoder { model, memory, source_mask, written, cache }
    }

    /// Everything written so far, `[k, t]`, `<s>` first.
    pub fn written(&self) -> &Tensor {
        &self.written
    }

    /// The log-probabilities `[k, V]` of the next token after what has been written. The step runs in
    /// [inference mode](crate::inference_mode), so the tensor returned is for reading (argmax, top-k, …):
    /// changing it in place needs a `copy()` first.
    pub fn next_log_probs(&mut self) -> Tensor {
        let _inference = inference_mode_guard();
        let model = self.model;
        let t = self.written.size()[1];
        // With a cache, only the newest token goes in, at position t − 1; its one query may see every
        // position, so it needs no causal mask (decoders never write padding). Without one, the whole prefix.
        let (new_ids, first_position, target_mask) = match self.cache {
            Some(_) => (self.written.narrow(1, t - 1, 1), t - 1, None),
            None => (self.written.shallow_clone(), 0, Some(decoder_mask(&self.written, model.config.pad_id))),
        };
        let y = model.target_embedding.embed(&new_ids, first_position, false); // [k, t_new, d_model]
        let cache = self.cache.as_deref_mut();
        let states = model
            .decoder
            .forward(&y, &self.memory, target_mask.as_ref(), self.source_mask.as_ref(), Pass::EVAL, cache)
            .hidden_state; // [k, t_new, d_model]
        let last = states.narrow(1, states.size()[1] - 1, 1); // [k, 1, d_model]
        model.generate(&last).squeeze_dim(1) // [k, V]
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
        self.source_mask = self.source_mask.as_ref().map(|m| m.index_select(0, rows));
        for layer in self.cache.iter_mut().flatten() {
            layer.select(rows);
        }
    }
}
