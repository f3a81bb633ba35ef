//! # The whole original Transformer: encoder, decoder and output layer
//!
//! The 2017 model translates: the encoder reads the source sentence once, and the decoder writes the
//! target one token at a time, each step looking at what it wrote so far (masked self-attention) and at
//! the encoder's output (encoder-decoder attention). Tokens enter through embeddings scaled by
//! `√d_model` plus the fixed sinusoidal positional encoding; a final linear layer and a log-softmax turn
//! each target position into log-probabilities over the target vocabulary. [`EncoderDecoder`] assembles
//! it from the chapter's modules; [`greedy`](fn@crate::decoding::greedy) writes a translation step by step.
//!
//! Chapter section: [`chapters/08-decoder-and-masking.md`](../chapters/08-decoder-and-masking.md).
use anyhow::{ensure, Context, Result};
use tch::nn::{self, Module, ModuleT};
use tch::{Kind, Tensor};

use crate::attention::Pass;
use crate::config::{LayerNormPlacement, Seq2SeqConfig};
use crate::decoder::{DecoderOutput, TransformerDecoder};
use crate::embeddings::{check_ids, ScaledEmbedding};
use crate::encoder::EncoderStack;
use crate::encoder_layer::{AttentionKind, EncoderOptions};
use crate::init;
use crate::masks::{decoder_mask, padding_mask};

/// How an error names the sinusoidal table when ids run past it.
pub(crate) const POSITIONS: &str = "the positional encoding covers only";

/// The encoder-decoder Transformer. Parameters at `encoder.*`, `decoder.*` and `generator`.
#[derive(Debug)]
pub struct EncoderDecoder {
    pub config: Seq2SeqConfig,
    pub source_embedding: ScaledEmbedding,
    pub target_embedding: ScaledEmbedding,
    pub encoder: EncoderStack,
    pub decoder: TransformerDecoder,
    /// The output layer: hidden state → one logit per target token.
    pub generator: nn::Linear,
}

impl EncoderDecoder {
    /// Builds the model in its own `VarStore` and initializes every matrix (dim > 1) with Xavier-uniform
    /// and every bias with 0, as the paper's reference implementation does.
    pub fn new(vs: &nn::VarStore, config: &Seq2SeqConfig) -> Result<Self> {
        config.validate()?;
        let root = vs.root();
        let layer = config.layer();
        let options =
            EncoderOptions { placement: config.placement, attention: AttentionKind::Fused, token_types: false };
        let pre = config.placement == LayerNormPlacement::Pre;
        let model = EncoderDecoder {
            source_embedding: ScaledEmbedding::new(&root / "encoder", config.source_vocab_size, config),
            target_embedding: ScaledEmbedding::new(&root / "decoder", config.target_vocab_size, config),
            encoder: EncoderStack::new(&root / "encoder", &layer, config.num_layers, options, pre),
            decoder: TransformerDecoder::new(&root / "decoder", &layer, config.num_layers, config.placement),
            generator: init::linear(&root / "generator", config.d_model, config.target_vocab_size),
            config: config.clone(),
        };
        init::xavier_uniform(vs);
        Ok(model)
    }

    /// The source ids `[batch, s]` → the encoder's output ("memory") `[batch, s, d_model]`.
    pub fn encode(&self, source: &Tensor, source_mask: Option<&Tensor>, train: bool) -> Tensor {
        let x = self.source_embedding.forward_t(source, train);
        self.encoder.forward(&x, source_mask, train).last_hidden_state
    }

    /// The target ids so far `[batch, t]` and the memory → decoder states `[batch, t, d_model]` (and
    /// the decoder's attention weights, when the pass asks for them).
    pub fn decode(
        &self,
        memory: &Tensor,
        source_mask: Option<&Tensor>,
        target: &Tensor,
        target_mask: Option<&Tensor>,
        pass: impl Into<Pass>,
    ) -> DecoderOutput {
        let pass = pass.into();
        let y = self.target_embedding.forward_t(target, pass.train);
        self.decoder.forward(&y, memory, target_mask, source_mask, pass, None)
    }

    /// The output layer: decoder states → log-probabilities over the target vocabulary.
    pub fn generate(&self, decoder_states: &Tensor) -> Tensor {
        self.generator.forward(decoder_states).log_softmax(-1, Kind::Float) // [batch, t, target_vocab]
    }

    /// Source and target ids → log-probabilities `[batch, t, target_vocab]`, with the padding masks and
    /// the causal mask built from the ids and `config.pad_id`.
    pub fn forward(&self, source: &Tensor, target: &Tensor, train: bool) -> Tensor {
        let source_mask = padding_mask(source, self.config.pad_id); // [batch, 1, s]
        let target_mask = decoder_mask(target, self.config.pad_id); // [batch, t, t]
        let memory = self.encode(source, Some(&source_mask), train);
        self.generate(&self.decode(&memory, Some(&source_mask), target, Some(&target_mask), train).hidden_state)
    }

    /// Checks ids from outside against the vocabularies and the positional table, then runs
    /// [`EncoderDecoder::forward`].
    pub fn try_forward(&self, source: &Tensor, target: &Tensor, train: bool) -> Result<Tensor> {
        check_ids(source, self.config.source_vocab_size, self.config.max_len, POSITIONS).context("source ids")?;
        check_ids(target, self.config.target_vocab_size, self.config.max_len, POSITIONS).context("target ids")?;
        ensure!(source.size()[0] == target.size()[0], "source and target batches differ in size");
        Ok(self.forward(source, target, train))
    }
}
