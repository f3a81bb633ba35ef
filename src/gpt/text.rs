//! Characters as tokens: the vocabulary is every distinct character of the training text, so no
//! tokenizer needs training and any UTF-8 file will do. The first 90 % of the text trains the model; the
//! last 10 % is held out to measure it.
use anyhow::{bail, ensure, Context, Result};
use std::path::Path;
use tch::{Device, Kind, Tensor};

/// The characters a model knows, in a fixed (sorted) order: id `i` is `chars[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharVocab {
    pub chars: Vec<char>,
}

impl CharVocab {
    /// Every distinct character of `text`, sorted.
    pub fn from_text(text: &str) -> Self {
        let mut chars: Vec<char> = text.chars().collect();
        chars.sort_unstable();
        chars.dedup();
        CharVocab { chars }
    }

    pub fn len(&self) -> usize {
        self.chars.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// The ids of `text`; a character the model never saw is an error that names it.
    pub fn encode(&self, text: &str) -> Result<Vec<i64>> {
        text.chars()
            .map(|c| match self.chars.binary_search(&c) {
                Ok(i) => Ok(i as i64),
                Err(_) => bail!("the character {c:?} is not in the model's vocabulary of {} characters", self.len()),
            })
            .collect()
    }

    /// The text of `ids` (ids outside the vocabulary become '?').
    pub fn decode(&self, ids: &[i64]) -> String {
        ids.iter().map(|&i| self.chars.get(i as usize).copied().unwrap_or('?')).collect()
    }
}

/// A text cut into its training part (the first 90 %) and its held-out part (the last 10 %), as ids.
#[derive(Debug)]
pub struct Corpus {
    pub vocab: CharVocab,
    /// `[n_train]` ids.
    pub train: Tensor,
    /// `[n_val]` ids.
    pub val: Tensor,
}

impl Corpus {
    /// Reads a UTF-8 file; it must hold at least two blocks of `context + 1` characters in each part.
    pub fn from_file(path: &Path, context: i64) -> Result<Self> {
        let bytes = std::fs::read(path).with_context(|| format!("cannot read the text {}", path.display()))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            anyhow::anyhow!(
                "{} is not UTF-8 text (invalid byte at {}): give a UTF-8 file",
                path.display(),
                e.utf8_error().valid_up_to()
            )
        })?;
        Self::from_text(&text, context).with_context(|| format!("{}", path.display()))
    }

    pub fn from_text(text: &str, context: i64) -> Result<Self> {
        ensure!(context > 0, "the context must be at least 1 character, got {context}");
        let vocab = CharVocab::from_text(text);
        let ids = vocab.encode(text)?;
        let n = ids.len() as i64;
        let split = n * 9 / 10;
        let need = 2 * (context + 1);
        ensure!(
            split >= need && n - split >= need,
            "the text has {n} characters: too short for a context of {context} (each part needs at least two \
             blocks of {} characters, so the whole text at least {}); give a longer text or a smaller --context",
            context + 1,
            need * 10
        );
        let all = Tensor::from_slice(&ids);
        Ok(Corpus { vocab, train: all.narrow(0, 0, split), val: all.narrow(0, split, n - split) })
    }

    /// A random batch from the training part: inputs `[batch, context]` and the targets, the same
    /// characters shifted by one. Draws from LibTorch's generator (seed it with `tch::manual_seed`).
    pub fn batch(&self, batch: i64, context: i64, device: Device) -> (Tensor, Tensor) {
        let starts = Tensor::randint(self.train.size()[0] - context - 1, [batch, 1], (Kind::Int64, Device::Cpu));
        let index = starts + Tensor::arange(context + 1, (Kind::Int64, Device::Cpu)).unsqueeze(0); // [batch, context + 1]
        let rows = self.train.index_select(0, &index.view([-1])).view([batch, context + 1]);
        (rows.narrow(1, 0, context).to_device(device), rows.narrow(1, 1, context).to_device(device))
    }

    /// The held-out part as every non-overlapping block of `context` inputs and their targets:
    /// `[blocks, context]` each, the same for every run (the evaluation is deterministic).
    pub fn val_blocks(&self, context: i64) -> (Tensor, Tensor) {
        let n = self.val.size()[0];
        let blocks = (n - 1) / context;
        let inputs = self.val.narrow(0, 0, blocks * context).view([blocks, context]);
        let targets = self.val.narrow(0, 1, blocks * context).view([blocks, context]);
        (inputs, targets)
    }
}
