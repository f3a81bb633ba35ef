//! # The whole original Transformer: encoder, decoder and output layer
//!
//! The 2017 model translates: the encoder reads the source sentence once, and the decoder writes the
//! target one token at a time, each step looking at what it wrote so far (masked self-attention) and at
//! the encoder's output (encoder-decoder attention). Tokens enter through embeddings scaled by
//! `√d_model` plus the fixed sinusoidal positional encoding; a final linear layer and a log-softmax turn
//! each target position into log-probabilities over the target vocabulary. [`Seq2SeqConfig`] holds its
//! sizes, [`ScaledEmbedding`] is its way into the model, [`EncoderDecoder`] assembles it from the chapter's
//! modules, and [`greedy`](fn@crate::decoding::greedy) writes a translation step by step. All three live
//! here, with the chapter that introduces them, so that the encoder's steps before it depend on nothing of
//! the decoder side.
//!
//! Chapter section: [`chapters/08-decoder-and-masking.md`](../chapters/08-decoder-and-masking.md).
use anyhow::{ensure, Context, Result};
use serde::{Deserialize, Serialize};
use tch::nn::{self, Module, ModuleT};
use tch::{Kind, Tensor};

use crate::attention::Pass;
use crate::config::{Activation, AttentionKind, LayerConfig, LayerNormPlacement, StackConfig};
use crate::decoder::{DecoderOutput, TransformerDecoder};
use crate::embeddings::check_ids;
use crate::encoder::EncoderStack;
use crate::init;
use crate::masks::{decoder_mask, padding_mask};
use crate::positional_encoding::sinusoidal_positions;

/// How an error names the sinusoidal table when ids run past it.
pub(crate) const POSITIONS: &str = "the positional encoding covers only";

/// The sizes of an encoder-decoder model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Seq2SeqConfig {
    pub source_vocab_size: i64,
    pub target_vocab_size: i64,
    /// `d_model`: the width of every token vector.
    pub d_model: i64,
    pub num_heads: i64,
    /// Layers in the encoder, and again in the decoder.
    pub num_layers: i64,
    /// The feed-forward layer's hidden width, `d_ff` (4 · `d_model` in the paper).
    pub d_ff: i64,
    pub dropout: f64,
    /// The longest sequence the positional encoding table covers.
    pub max_len: i64,
    /// The id that fills up short sequences; it is masked out of attention.
    pub pad_id: i64,
    pub placement: LayerNormPlacement,
}

impl Seq2SeqConfig {
    /// The paper's base model: d_model 512, 8 heads, 6 + 6 layers, d_ff 2048, dropout 0.1, with the
    /// pre-layer-norm placement of the annotated implementations.
    pub fn paper(source_vocab_size: i64, target_vocab_size: i64) -> Self {
        Seq2SeqConfig {
            source_vocab_size,
            target_vocab_size,
            d_model: 512,
            num_heads: 8,
            num_layers: 6,
            d_ff: 4 * 512,
            dropout: 0.1,
            max_len: 5000,
            pad_id: 0,
            placement: LayerNormPlacement::Pre,
        }
    }

    /// A small model (d_model 32, 4 heads, 2 + 2 layers) for tests and experiments.
    pub fn tiny(source_vocab_size: i64, target_vocab_size: i64) -> Self {
        Seq2SeqConfig {
            d_model: 32,
            num_heads: 4,
            num_layers: 2,
            d_ff: 4 * 32,
            max_len: 64,
            ..Self::paper(source_vocab_size, target_vocab_size)
        }
    }

    /// What each encoder and decoder layer needs: the sizes, a ReLU feed-forward, the dropout, the
    /// configured placement and fused attention.
    pub fn layer(&self) -> LayerConfig {
        LayerConfig {
            hidden_size: self.d_model,
            num_attention_heads: self.num_heads,
            intermediate_size: self.d_ff,
            hidden_act: Activation::Relu,
            hidden_dropout_prob: self.dropout,
            attention_probs_dropout_prob: self.dropout,
            layer_norm_eps: 1e-6,
            placement: self.placement,
            attention: AttentionKind::Fused,
        }
    }

    /// The encoder's stack and, again, the decoder's: `num_layers` layers, closed by a final LayerNorm
    /// when they are pre-LN (every post-LN layer already ends in one).
    pub fn stack(&self) -> StackConfig {
        let final_layer_norm = self.placement == LayerNormPlacement::Pre;
        StackConfig { layer: self.layer(), num_layers: self.num_layers, final_layer_norm }
    }

    pub fn validate(&self) -> Result<()> {
        ensure!(self.source_vocab_size > 0 && self.target_vocab_size > 0, "vocabulary sizes must be positive");
        ensure!(self.num_layers > 0, "num_layers must be positive, got {}", self.num_layers);
        ensure!(self.max_len > 0, "max_len must be positive, got {}", self.max_len);
        ensure!(self.d_model % 2 == 0, "d_model must be even for the sinusoidal encoding, got {}", self.d_model);
        ensure!((0..self.target_vocab_size).contains(&self.pad_id), "pad_id {} is not a target token id", self.pad_id);
        self.layer().validate()
    }
}

/// The encoder-decoder's embedding (chapter 8): token embedding × √d_model, plus the fixed sinusoidal
/// positions, then dropout. Unlike BERT's [`Embeddings`](crate::Embeddings), the positions are not learned, and the scale
/// keeps the token vectors as large as the positional ones.
#[derive(Debug)]
pub struct ScaledEmbedding {
    pub tokens: nn::Embedding,
    pub positions: Tensor,
    scale: f64,
    dropout: f64,
}

impl ScaledEmbedding {
    /// The table at `embed_tokens` under `p`, for `vocab_size` tokens of `config.d_model` numbers.
    pub fn new(p: nn::Path, vocab_size: i64, config: &Seq2SeqConfig) -> Self {
        ScaledEmbedding {
            tokens: init::embedding(&p / "embed_tokens", vocab_size, config.d_model),
            positions: sinusoidal_positions(config.max_len, config.d_model, p.device()), // a constant, not a parameter
            scale: (config.d_model as f64).sqrt(),
            dropout: config.dropout,
        }
    }

    /// `[batch, seq]` ids standing at positions `first_position..first_position + seq` →
    /// `[batch, seq, d_model]`. A decoder that writes one token at a time embeds only the newest one, at
    /// its own position.
    pub fn embed(&self, ids: &Tensor, first_position: i64, train: bool) -> Tensor {
        let seq = ids.size()[1];
        let positions = self.positions.narrow(0, first_position, seq); // [seq, d_model]
        let x = self.tokens.forward(ids) * self.scale + positions; // [batch, seq, d_model]
        x.dropout(self.dropout, train)
    }
}

impl nn::ModuleT for ScaledEmbedding {
    /// `[batch, seq]` ids from position 0 → `[batch, seq, d_model]`.
    fn forward_t(&self, ids: &Tensor, train: bool) -> Tensor {
        self.embed(ids, 0, train)
    }
}

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
    /// Builds the model in its own `VarStore` and initializes every matrix (dim > 1), the embedding tables
    /// included, with Xavier-uniform and every bias with 0: the lecture notes' start, whose code comes from
    /// the Annotated Transformer (not the paper's tensor2tensor; see [`init::xavier_uniform`]).
    pub fn new(vs: &nn::VarStore, config: &Seq2SeqConfig) -> Result<Self> {
        config.validate()?;
        let root = vs.root();
        let stack = config.stack();
        let model = EncoderDecoder {
            source_embedding: ScaledEmbedding::new(&root / "encoder", config.source_vocab_size, config),
            target_embedding: ScaledEmbedding::new(&root / "decoder", config.target_vocab_size, config),
            encoder: EncoderStack::new(&root / "encoder", &stack),
            decoder: TransformerDecoder::new(&root / "decoder", &stack),
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
