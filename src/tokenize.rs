//! # From text to token ids (`chapters/01-tokenize.md`)
//!
//! A transformer never sees letters: a tokenizer first cuts the text into WordPiece tokens from a fixed
//! vocabulary and replaces each by its row number in the embedding table. This module wraps the
//! `tokenizers` crate around the model folder's `tokenizer.json` (bert-base-uncased's vocabulary) and
//! switches off the padding and truncation that file asks for, so that five words give five ids, as in
//! the chapter.
//!
//! Chapter section: [`chapters/01-tokenize.md`](../chapters/01-tokenize.md) ·
//! notebook `notebooks/01-tokenize.ipynb`.
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use serde::Serialize;
use tch::{Device, Kind, Tensor};

/// A WordPiece tokenizer that returns whole, unpadded encodings.
///
/// ```
/// use transformer_anatomy::Tokenizer;
///
/// // The folder `make setup` fills; doc tests run from the project's root.
/// let tokenizer = Tokenizer::from_model_dir("models/all-MiniLM-L6-v2")?;
/// let encoding = tokenizer.encode("time flies like an arrow", false)?;
/// assert_eq!(encoding.input_ids, [2051, 10029, 2066, 2019, 8612]);
/// assert!(tokenizer.encode("", false).is_err());
/// # Ok::<(), anyhow::Error>(())
/// ```
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
}

/// One tokenized text (or text pair): the ids the model reads, which sentence each token came from,
/// and the tokens themselves for people to read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Encoding {
    /// Row numbers in the vocabulary, one per token.
    pub input_ids: Vec<i64>,
    /// 0 for tokens of the first text (and `[CLS]`), 1 for tokens of the second text.
    pub token_type_ids: Vec<i64>,
    /// The WordPiece tokens, e.g. `["time", "flies", ...]`.
    pub tokens: Vec<String>,
}

impl Encoding {
    /// How many tokens there are.
    pub fn len(&self) -> usize {
        self.input_ids.len()
    }

    /// True when no token came out.
    pub fn is_empty(&self) -> bool {
        self.input_ids.is_empty()
    }

    /// The ids as a batch of one: `[1, seq_len]`, `int64`, as `return_tensors="pt"` gives them.
    pub fn ids_tensor(&self, device: Device) -> Tensor {
        Tensor::from_slice(&self.input_ids).to_kind(Kind::Int64).to_device(device).unsqueeze(0)
        // [1, seq]
    }

    /// The token type ids as `[1, seq_len]`.
    pub fn type_ids_tensor(&self, device: Device) -> Tensor {
        Tensor::from_slice(&self.token_type_ids).to_kind(Kind::Int64).to_device(device).unsqueeze(0)
    }
}

impl Tokenizer {
    /// Loads `tokenizer.json` from a model folder (or a path to the file itself).
    pub fn from_model_dir(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref();
        let file = if dir.is_dir() { dir.join("tokenizer.json") } else { dir.to_path_buf() };
        if !file.exists() {
            bail!("no tokenizer at {}: run `make setup` to fetch the model, or pass --model DIR", file.display());
        }
        let mut inner = tokenizers::Tokenizer::from_file(&file)
            .map_err(|e| anyhow!("{e}"))
            .with_context(|| format!("{} is not a valid tokenizer.json", file.display()))?;
        // The MiniLM tokenizer.json pads and truncates every text to 128 tokens; the chapter wants the
        // plain ids, so both are switched off.
        inner.with_padding(None);
        inner.with_truncation(None).map_err(|e| anyhow!("{e}"))?;
        Ok(Tokenizer { inner })
    }

    /// Tokenizes one text. With `add_special_tokens` the ids are wrapped in `[CLS] … [SEP]`, as BERT
    /// expects; the chapter leaves them out for its first steps.
    pub fn encode(&self, text: &str, add_special_tokens: bool) -> Result<Encoding> {
        check_text(text, "the text")?;
        let encoding = self.inner.encode(text, add_special_tokens).map_err(|e| anyhow!("{e}"))?;
        Ok(convert(&encoding))
    }

    /// Tokenizes many texts at once, spread over the CPU's cores (the tokenizers library's own batch
    /// call). Unlike [`Tokenizer::encode`] it accepts empty texts (with special tokens: `[CLS] [SEP]`).
    pub fn encode_batch(&self, texts: &[&str], add_special_tokens: bool) -> Result<Vec<Encoding>> {
        let encodings = self.inner.encode_batch(texts.to_vec(), add_special_tokens).map_err(|e| anyhow!("{e}"))?;
        Ok(encodings.iter().map(convert).collect())
    }

    /// Tokenizes a pair of texts, such as a question and a passage: `[CLS] a [SEP] b [SEP]` with
    /// special tokens, and token type ids that tell the two apart.
    pub fn encode_pair(&self, a: &str, b: &str, add_special_tokens: bool) -> Result<Encoding> {
        check_text(a, "the first text")?;
        check_text(b, "the second text")?;
        let encoding = self.inner.encode((a, b), add_special_tokens).map_err(|e| anyhow!("{e}"))?;
        Ok(convert(&encoding))
    }

    /// The token string for an id, or `None` when the id is outside the vocabulary.
    pub fn id_to_token(&self, id: i64) -> Option<String> {
        u32::try_from(id).ok().and_then(|id| self.inner.id_to_token(id))
    }

    /// The id of a token, or `None` when the vocabulary does not have it.
    pub fn token_to_id(&self, token: &str) -> Option<i64> {
        self.inner.token_to_id(token).map(i64::from)
    }

    /// How many tokens the vocabulary holds, special tokens included.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }
}

fn check_text(text: &str, what: &str) -> Result<()> {
    if text.trim().is_empty() {
        bail!("{what} is empty: give at least one word to tokenize");
    }
    Ok(())
}

fn convert(encoding: &tokenizers::Encoding) -> Encoding {
    Encoding {
        input_ids: encoding.get_ids().iter().map(|&id| i64::from(id)).collect(),
        token_type_ids: encoding.get_type_ids().iter().map(|&id| i64::from(id)).collect(),
        tokens: encoding.get_tokens().to_vec(),
    }
}
