//! # Embeddings (`chapters/01-tokenize.md`, *Token embeddings*; `chapters/06-positional-embeddings.md`)
//!
//! An embedding is a lookup table: token id `i` picks row `i` of a `vocab_size × hidden_size` matrix of
//! learned numbers (chapter 1). Attention by itself does not know where a token stands — shuffle the
//! tokens and it shuffles its outputs the same way — so the full [`Embeddings`] module (chapter 6) adds a
//! second learned table indexed by position `0, 1, 2, …`, then normalizes each vector and applies
//! dropout.
//!
//! Chapter sections: [`chapters/01-tokenize.md`](../chapters/01-tokenize.md) (token embedding) and
//! [`chapters/06-positional-embeddings.md`](../chapters/06-positional-embeddings.md) ·
//! notebooks `notebooks/01-tokenize.ipynb`, `notebooks/06-positional-embeddings.ipynb`.
use std::borrow::Borrow;

use anyhow::{bail, ensure, Context, Result};
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

use crate::config::BertConfig;
use crate::init;

/// `chapters/01-tokenize.md`, *Token embeddings*: the token embedding table alone, at `word_embeddings` under the given path.
/// `[batch, seq]` ids become `[batch, seq, hidden_size]` vectors.
pub fn token_embedding<'a>(p: impl Borrow<nn::Path<'a>>, config: &BertConfig) -> nn::Embedding {
    init::embedding(p.borrow() / "word_embeddings", config.vocab_size, config.hidden_size)
}

/// Checks ids before they reach LibTorch, which would abort on an out-of-range index: they must be a
/// `[batch, seq]` integer tensor with `1 ≤ seq ≤ max_position_embeddings` and every id below `vocab_size`.
pub fn check_input_ids(ids: &Tensor, config: &BertConfig) -> Result<()> {
    check_ids(ids, config.vocab_size, config.max_position_embeddings, "the model has position embeddings for only")
}

/// The checks behind [`check_input_ids`] for any model: `ids` must be a `[batch, seq]` integer tensor
/// with `1 ≤ seq ≤ max_len` and ids in `0..vocab_size`. `positions` names the position table in the
/// message, e.g. "the positional encoding covers only".
pub fn check_ids(ids: &Tensor, vocab_size: i64, max_len: i64, positions: &str) -> Result<()> {
    let size = ids.size();
    ensure!(size.len() == 2, "input ids must have shape [batch, seq], got {size:?}");
    ensure!(
        matches!(ids.kind(), Kind::Int64 | Kind::Int | Kind::Int16 | Kind::Int8 | Kind::Uint8),
        "input ids must be integers, got {:?}",
        ids.kind()
    );
    let (batch, seq) = (size[0], size[1]);
    ensure!(
        batch > 0 && seq > 0,
        "there are no tokens to embed (shape {size:?}, seq ≥ 1 needed): give a non-empty text"
    );
    if seq > max_len {
        bail!("the text has {seq} tokens but {positions} {max_len}: shorten the text");
    }
    let min = ids.f_min().and_then(|t| t.f_int64_value(&[])).context("reading the smallest id")?;
    let max = ids.f_max().and_then(|t| t.f_int64_value(&[])).context("reading the largest id")?;
    if min < 0 || max >= vocab_size {
        let bad = if min < 0 { min } else { max };
        bail!("token id {bad} is outside the vocabulary (0..{vocab_size}): the ids and the model's configuration do not match");
    }
    Ok(())
}

/// `chapters/06-positional-embeddings.md`: token embeddings plus learned position embeddings, then LayerNorm and dropout.
///
/// Parameters at `word_embeddings`, `position_embeddings` and `LayerNorm` under the given path (Hugging
/// Face BERT keeps them under `embeddings`). Real BERT checkpoints add a third table,
/// `token_type_embeddings`, that tells the first and second text of a pair apart; it is built when the
/// config's [`EncoderOptions::token_types`](crate::EncoderOptions::token_types) says so.
#[derive(Debug)]
pub struct Embeddings {
    pub token_embeddings: nn::Embedding,
    pub position_embeddings: nn::Embedding,
    pub token_type_embeddings: Option<nn::Embedding>,
    pub layer_norm: nn::LayerNorm,
    dropout: f64,
}

impl Embeddings {
    /// The token and position tables, LayerNorm and dropout of `config`, plus BERT's token type table
    /// (`token_type_embeddings`, `type_vocab_size × hidden`) when `config.options.token_types`.
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &BertConfig) -> Self {
        let p = p.borrow();
        let ln = nn::LayerNormConfig { eps: config.layer_norm_eps, ..Default::default() };
        let token_type_embeddings = config
            .options
            .token_types
            .then(|| init::embedding(p / "token_type_embeddings", config.type_vocab_size, config.hidden_size));
        Embeddings {
            token_embeddings: token_embedding(p, config),
            position_embeddings: init::embedding(
                p / "position_embeddings",
                config.max_position_embeddings,
                config.hidden_size,
            ),
            token_type_embeddings,
            layer_norm: nn::layer_norm(p / "LayerNorm", vec![config.hidden_size], ln),
            dropout: config.hidden_dropout_prob,
        }
    }

    /// Like `forward_t`, with token type ids `[batch, seq]` (all 0 when `None`, as in Hugging Face).
    /// Without a token type table the type ids are ignored.
    pub fn forward_with_types(&self, input_ids: &Tensor, token_type_ids: Option<&Tensor>, train: bool) -> Tensor {
        let seq_len = input_ids.size()[1];
        let position_ids = Tensor::arange(seq_len, (Kind::Int64, input_ids.device())).unsqueeze(0); // [1, seq]
        let tokens = self.token_embeddings.forward(input_ids); // [batch, seq, hidden]
        let positions = self.position_embeddings.forward(&position_ids); // [1, seq, hidden], broadcast over the batch
        let mut summed = tokens + positions;
        if let Some(table) = &self.token_type_embeddings {
            summed += match token_type_ids {
                Some(types) => table.forward(types),
                None => table.forward(&input_ids.zeros_like()),
            };
        }
        self.layer_norm.forward(&summed).dropout(self.dropout, train) // [batch, seq, hidden]
    }
}

impl nn::ModuleT for Embeddings {
    /// `[batch, seq]` ids → `[batch, seq, hidden]`. Check untrusted ids with [`check_input_ids`] first.
    fn forward_t(&self, input_ids: &Tensor, train: bool) -> Tensor {
        self.forward_with_types(input_ids, None, train)
    }
}
