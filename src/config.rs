//! # The configuration (`chapters/01-tokenize.md`, *The configuration*)
//!
//! Every size in the chapter (768 hidden units, 12 heads, 30 522 tokens, …) comes from one place: the
//! checkpoint's `config.json`. [`BertConfig`] holds the fields the chapter uses, reads them from such a
//! file with clear errors, and checks that they fit together (for instance that the hidden size splits
//! evenly across the heads) before any tensor is made. Names are parsed into types when the file is read
//! (an unknown `hidden_act` fails there, not later), and the sizes one layer needs travel as a
//! [`LayerConfig`], which the encoder-decoder's configuration produces too. Each model part is built
//! from one reference to one configuration: a layer's parts from a [`LayerConfig`], a stack from a
//! [`StackConfig`], a whole encoder from a [`BertConfig`], which carries the [`EncoderOptions`] (the
//! chapter's choices or BERT's) that `config.json` does not. This file depends on no
//! model file: the arrows run from the modules to the configuration, never back.
//!
//! Chapter section: [`chapters/01-tokenize.md`](../chapters/01-tokenize.md) ·
//! notebook `notebooks/01-tokenize.ipynb`.
use std::fmt;
use std::path::Path;

use anyhow::{bail, ensure, Context, Result};
use serde::{Deserialize, Serialize};

/// The hyper-parameters of a BERT-style encoder, named exactly as in Hugging Face's `config.json`, and
/// the [`EncoderOptions`] that say how to build it (the chapter's way or BERT's). `config.json` does not
/// hold those options, so every constructor ([`BertConfig::from_file`], [`BertConfig::from_json_str`],
/// [`BertConfig::bert_base_uncased`], [`BertConfig::tiny`]) takes them: there is no default, say which.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BertConfig {
    /// How many different token ids the embedding table has rows for.
    pub vocab_size: i64,
    /// The width of every token vector between the layers (`d_model` in the 2017 paper).
    pub hidden_size: i64,
    /// How many attention heads share the hidden size; each head gets `hidden_size / heads` dimensions.
    pub num_attention_heads: i64,
    /// How many encoder layers are stacked.
    pub num_hidden_layers: i64,
    /// The width of the feed-forward layer's hidden layer (usually 4 × hidden size).
    pub intermediate_size: i64,
    /// The longest sequence the learned position embeddings cover.
    pub max_position_embeddings: i64,
    /// How many token types (segments) BERT's token type embeddings tell apart: 2, for sentence A and B.
    #[serde(default = "default_type_vocab_size")]
    pub type_vocab_size: i64,
    /// Dropout on embeddings and on each sub-layer's output (only active in training).
    #[serde(default = "default_dropout")]
    pub hidden_dropout_prob: f64,
    /// Dropout on the attention weights (only active in training).
    #[serde(default = "default_dropout")]
    pub attention_probs_dropout_prob: f64,
    /// The epsilon every LayerNorm adds to the variance.
    #[serde(default = "default_layer_norm_eps")]
    pub layer_norm_eps: f64,
    /// How many classes the classification head predicts. Hugging Face derives it from `id2label`;
    /// when a `config.json` has neither, it is 2, as in `transformers`.
    #[serde(default = "default_num_labels")]
    pub num_labels: i64,
    /// The feed-forward activation: `gelu` (exact, erf-based), `gelu_new`/`gelu_pytorch_tanh` (tanh
    /// approximation) or `relu`.
    #[serde(default)]
    pub hidden_act: Activation,
    /// How to build the encoder: layer-norm placement, attention implementation, token type table. Not
    /// part of `config.json`; a bare serde read puts in a placeholder that [`BertConfig::from_json_str`]
    /// replaces at once with the options it was given.
    #[serde(skip, default = "EncoderOptions::book")]
    pub options: EncoderOptions,
}

/// The non-linearity between the feed-forward layer's two linear maps, as `hidden_act` names it in
/// `config.json`. Any other name fails when the file is read, with the accepted names in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Activation {
    /// The exact GELU, `x · Φ(x)` with the normal CDF Φ (BERT's `gelu`).
    #[default]
    #[serde(rename = "gelu")]
    Gelu,
    /// The tanh approximation of GELU (`gelu_new`, also called `gelu_pytorch_tanh`).
    #[serde(rename = "gelu_new", alias = "gelu_pytorch_tanh")]
    GeluTanh,
    /// `max(0, x)`, the original Transformer's choice.
    #[serde(rename = "relu")]
    Relu,
}

/// Where each sub-layer's LayerNorm sits relative to its skip connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LayerNormPlacement {
    /// `x + sublayer(LayerNorm(x))`: the chapter's choice and most recent models'; it trains stably
    /// without a careful warm-up.
    Pre,
    /// `LayerNorm(x + sublayer(x))`: the 2017 paper's and BERT's choice; BERT checkpoints need it.
    Post,
}

/// Which implementation of multi-head attention a layer uses. Both compute the same function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionKind {
    /// The chapter's list of [`AttentionHead`](crate::AttentionHead)s
    /// ([`MultiHeadAttention`](crate::MultiHeadAttention)).
    PerHead,
    /// One projection for all heads ([`FusedMultiHeadAttention`](crate::FusedMultiHeadAttention)); faster,
    /// and the layout of checkpoints.
    Fused,
}

/// The choices that the chapter and BERT make differently. There is no default on purpose: say which.
/// A [`BertConfig`] carries them, and its [`BertConfig::layer`] hands placement and attention on to
/// every layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncoderOptions {
    pub placement: LayerNormPlacement,
    pub attention: AttentionKind,
    /// Whether the embeddings add BERT's token type (segment) embeddings; the chapter's do not.
    pub token_types: bool,
}

impl EncoderOptions {
    /// The chapter's encoder: pre-LN, per-head attention.
    pub fn book() -> Self {
        EncoderOptions { placement: LayerNormPlacement::Pre, attention: AttentionKind::PerHead, token_types: false }
    }

    /// BERT's encoder: post-LN, fused attention, token type embeddings (the layout of pretrained checkpoints).
    pub fn bert() -> Self {
        EncoderOptions { placement: LayerNormPlacement::Post, attention: AttentionKind::Fused, token_types: true }
    }
}

/// What one encoder or decoder layer needs to know: its sizes, its activation, its dropout rates, where
/// its LayerNorms sit and which attention it uses. [`BertConfig::layer`], the encoder-decoder's and the
/// GPT's configurations all produce one, so every part of a layer is built from this one value and never
/// sees a field that does not concern it.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerConfig {
    /// `d_model`: the width of every token vector.
    pub hidden_size: i64,
    pub num_attention_heads: i64,
    /// The feed-forward layer's hidden width (`d_ff`).
    pub intermediate_size: i64,
    pub hidden_act: Activation,
    /// Dropout on each sub-layer's output, before it is added to the skip path.
    pub hidden_dropout_prob: f64,
    /// Dropout on the attention weights.
    pub attention_probs_dropout_prob: f64,
    pub layer_norm_eps: f64,
    /// Where each sub-layer's LayerNorm sits relative to its skip connection.
    pub placement: LayerNormPlacement,
    /// Which self-attention an encoder layer builds. Decoder layers always use the fused one.
    pub attention: AttentionKind,
}

/// What a stack of layers (an [`EncoderStack`](crate::EncoderStack) or a
/// [`TransformerDecoder`](crate::TransformerDecoder)) needs: one layer's configuration, how many layers,
/// and whether a final LayerNorm closes the stack (pre-LN stacks in the 2017 model's annotated
/// implementations have one; BERT and the book do not).
#[derive(Debug, Clone, PartialEq)]
pub struct StackConfig {
    pub layer: LayerConfig,
    pub num_layers: i64,
    pub final_layer_norm: bool,
}

impl LayerConfig {
    /// Each head's share of the hidden size.
    pub fn head_dim(&self) -> i64 {
        self.hidden_size / self.num_attention_heads
    }

    /// Positive sizes, a head count that divides the width, dropout rates in `[0, 1)`.
    pub fn validate(&self) -> Result<()> {
        for (name, value) in [
            ("hidden_size", self.hidden_size),
            ("num_attention_heads", self.num_attention_heads),
            ("intermediate_size", self.intermediate_size),
        ] {
            ensure!(value > 0, "{name} must be positive, got {value}");
        }
        if self.hidden_size % self.num_attention_heads != 0 {
            bail!(
                "hidden_size {} is not divisible by num_attention_heads {}: every head needs the same \
                 number of dimensions, so choose a head count that divides the hidden size",
                self.hidden_size,
                self.num_attention_heads
            );
        }
        for (name, p) in [
            ("hidden_dropout_prob", self.hidden_dropout_prob),
            ("attention_probs_dropout_prob", self.attention_probs_dropout_prob),
        ] {
            ensure!((0.0..1.0).contains(&p), "{name} must be in [0, 1), got {p}");
        }
        ensure!(self.layer_norm_eps > 0.0, "layer_norm_eps must be positive, got {}", self.layer_norm_eps);
        Ok(())
    }
}

fn default_dropout() -> f64 {
    0.1
}
fn default_type_vocab_size() -> i64 {
    2
}
fn default_layer_norm_eps() -> f64 {
    1e-12
}
fn default_num_labels() -> i64 {
    2
}

/// What `config.json` may say about the labels; only used to derive `num_labels`.
#[derive(Deserialize)]
struct LabelFields {
    num_labels: Option<i64>,
    id2label: Option<serde_json::Map<String, serde_json::Value>>,
}

impl BertConfig {
    /// The configuration of `bert-base-uncased`, the checkpoint the chapter loads with `AutoConfig`, built
    /// with `options` (the chapter's [`EncoderOptions::book`] or [`EncoderOptions::bert`]).
    pub fn bert_base_uncased(options: EncoderOptions) -> Self {
        BertConfig {
            vocab_size: 30522,
            hidden_size: 768,
            num_attention_heads: 12,
            num_hidden_layers: 12,
            intermediate_size: 3072,
            max_position_embeddings: 512,
            type_vocab_size: 2,
            hidden_dropout_prob: 0.1,
            attention_probs_dropout_prob: 0.1,
            layer_norm_eps: 1e-12,
            num_labels: 2,
            hidden_act: Activation::Gelu,
            options,
        }
    }

    /// A very small configuration (hidden 32, 4 heads, 2 layers) for fast tests and experiments.
    pub fn tiny(options: EncoderOptions) -> Self {
        BertConfig {
            vocab_size: 100,
            hidden_size: 32,
            num_attention_heads: 4,
            num_hidden_layers: 2,
            intermediate_size: 64,
            max_position_embeddings: 16,
            ..Self::bert_base_uncased(options)
        }
    }

    /// Parses a `config.json` text, adds the `options` to build it with, and checks it with
    /// [`BertConfig::validate`].
    pub fn from_json_str(text: &str, options: EncoderOptions) -> Result<Self> {
        let mut config: BertConfig = serde_json::from_str(text)
            .map_err(|e| anyhow::anyhow!("config.json is not a valid BERT configuration: {e}"))?;
        config.options = options;
        let labels: LabelFields = serde_json::from_str(text)?;
        if let Some(n) = labels.num_labels {
            config.num_labels = n;
        } else if let Some(map) = labels.id2label {
            config.num_labels = map.len() as i64;
        }
        config.validate()?;
        Ok(config)
    }

    /// Reads `config.json` from a file, or from a model folder that holds one, to build with `options`.
    pub fn from_file(path: impl AsRef<Path>, options: EncoderOptions) -> Result<Self> {
        let mut path = path.as_ref().to_path_buf();
        if path.is_dir() {
            path = path.join("config.json");
        }
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!("cannot read {}: run `make setup` or pass --model DIR with a config.json", path.display())
        })?;
        Self::from_json_str(&text, options).with_context(|| format!("in {}", path.display()))
    }

    /// Each head's share of the hidden size (see [`LayerConfig::head_dim`]).
    pub fn head_dim(&self) -> i64 {
        self.layer().head_dim()
    }

    /// The part of the configuration that one encoder layer needs, with the placement and attention of
    /// its [`EncoderOptions`].
    pub fn layer(&self) -> LayerConfig {
        LayerConfig {
            hidden_size: self.hidden_size,
            num_attention_heads: self.num_attention_heads,
            intermediate_size: self.intermediate_size,
            hidden_act: self.hidden_act,
            hidden_dropout_prob: self.hidden_dropout_prob,
            attention_probs_dropout_prob: self.attention_probs_dropout_prob,
            layer_norm_eps: self.layer_norm_eps,
            placement: self.options.placement,
            attention: self.options.attention,
        }
    }

    /// The encoder's stack of `num_hidden_layers` layers; BERT's and the book's end without a final
    /// LayerNorm.
    pub fn stack(&self) -> StackConfig {
        StackConfig { layer: self.layer(), num_layers: self.num_hidden_layers, final_layer_norm: false }
    }

    /// Checks that the numbers make a model that can be built: positive sizes, a hidden size that the
    /// heads divide evenly and probabilities in `[0, 1)` (the activation was checked when it was read).
    ///
    /// ```
    /// use transformer_anatomy::{BertConfig, EncoderOptions};
    ///
    /// let base = BertConfig::bert_base_uncased(EncoderOptions::book());
    /// assert!(base.validate().is_ok());
    /// let odd = BertConfig { hidden_size: 770, ..base };
    /// assert!(odd.validate().unwrap_err().to_string().contains("not divisible"));
    /// ```
    pub fn validate(&self) -> Result<()> {
        for (name, value) in [
            ("vocab_size", self.vocab_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("max_position_embeddings", self.max_position_embeddings),
            ("type_vocab_size", self.type_vocab_size),
            ("num_labels", self.num_labels),
        ] {
            ensure!(value > 0, "{name} must be positive, got {value}");
        }
        self.layer().validate()
    }
}

impl Activation {
    /// The name `config.json` uses for it.
    pub fn name(self) -> &'static str {
        match self {
            Activation::Gelu => "gelu",
            Activation::GeluTanh => "gelu_new",
            Activation::Relu => "relu",
        }
    }
}

/// A listing in the spirit of `print(config)` in `transformers`: one field a line.
impl fmt::Display for BertConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "BertConfig {{")?;
        writeln!(f, "  \"attention_probs_dropout_prob\": {},", self.attention_probs_dropout_prob)?;
        writeln!(f, "  \"hidden_act\": \"{}\",", self.hidden_act.name())?;
        writeln!(f, "  \"hidden_dropout_prob\": {},", self.hidden_dropout_prob)?;
        writeln!(f, "  \"hidden_size\": {},", self.hidden_size)?;
        writeln!(f, "  \"intermediate_size\": {},", self.intermediate_size)?;
        writeln!(f, "  \"layer_norm_eps\": {:e},", self.layer_norm_eps)?;
        writeln!(f, "  \"max_position_embeddings\": {},", self.max_position_embeddings)?;
        writeln!(f, "  \"num_attention_heads\": {},", self.num_attention_heads)?;
        writeln!(f, "  \"num_hidden_layers\": {},", self.num_hidden_layers)?;
        writeln!(f, "  \"num_labels\": {},", self.num_labels)?;
        writeln!(f, "  \"type_vocab_size\": {},", self.type_vocab_size)?;
        writeln!(f, "  \"vocab_size\": {}", self.vocab_size)?;
        write!(f, "}}")
    }
}
