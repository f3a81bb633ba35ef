//! # Real weights: a pretrained BERT in the chapter's own modules
//!
//! The chapter builds its encoder with random weights and then switches to a separate, pretrained model
//! to look at attention. Here the pretrained weights go *into the chapter's modules*: a Hugging Face
//! BERT folder (`config.json`, `model.safetensors`) is read into a [`TransformerEncoder`] with BERT's
//! choices (post-layer-norm, token type embeddings, exact GELU) plus BERT's pooler. Because every
//! module names its parameters as Hugging Face does, loading is mostly matching names; the per-head
//! layout of chapter 3 takes its weights as slices of the checkpoint's fused query/key/value matrices.
//!
//! Chapter section: [`chapters/09-meet-the-transformers.md`](../chapters/09-meet-the-transformers.md).
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use anyhow::{anyhow, bail, ensure, Context, Result};
use tch::nn::{self, Module};
use tch::{Device, IndexOp, Tensor};

use crate::attention::Pass;
use crate::config::{AttentionKind, BertConfig, EncoderOptions};
use crate::encoder::TransformerEncoder;
use crate::init;
use crate::tokenize::{Encoding, Tokenizer};

/// What loading found besides the tensors it used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Parameters of the model that the file did not have (loading fails if there are any).
    pub missing: Vec<String>,
    /// Tensors in the file that the model has no place for (reported, then ignored).
    pub unexpected: Vec<String>,
}

/// A pretrained BERT: the chapter's encoder with BERT's options, and the pooler.
#[derive(Debug)]
pub struct BertModel {
    pub encoder: TransformerEncoder,
    /// `tanh(dense(hidden state of [CLS]))`, BERT's summary vector for next-sentence prediction.
    pub pooler: nn::Linear,
    pub config: BertConfig,
    pub load_report: LoadReport,
    /// Owns the parameters.
    pub vs: nn::VarStore,
}

/// What [`BertModel::forward`] returns.
#[derive(Debug)]
pub struct BertOutput {
    /// `[batch, seq, hidden]`
    pub last_hidden_state: Tensor,
    /// `[batch, hidden]`
    pub pooler_output: Tensor,
    /// One `[batch, heads, seq, seq]` tensor per layer.
    pub attentions: Vec<Tensor>,
}

impl BertModel {
    /// Loads `config.json` and `model.safetensors` from a Hugging Face BERT folder. `attention` picks
    /// the fused layout of the checkpoint or the chapter's per-head one (the weights are sliced).
    pub fn from_pretrained(dir: impl AsRef<Path>, attention: AttentionKind, device: Device) -> Result<Self> {
        let dir = dir.as_ref();
        let config = BertConfig::from_file(dir, EncoderOptions::bert())?;
        let weights = dir.join("model.safetensors");
        Self::from_config_and_weights(&config, &weights, attention, device)
    }

    /// Builds the model for `config` and reads its parameters from a safetensors file. A checkpoint has
    /// BERT's layout, so the model is built with [`EncoderOptions::bert`] whatever `config.options` says,
    /// except that `attention` picks the implementation; the returned `config` carries those options.
    pub fn from_config_and_weights(
        config: &BertConfig,
        weights: &Path,
        attention: AttentionKind,
        device: Device,
    ) -> Result<Self> {
        let config = &BertConfig { options: EncoderOptions { attention, ..EncoderOptions::bert() }, ..config.clone() };
        config.validate()?;
        let mut vs = nn::VarStore::new(device);
        let encoder = TransformerEncoder::new(vs.root(), config)?;
        let pooler = init::linear(vs.root() / "pooler" / "dense", config.hidden_size, config.hidden_size);
        let load_report = load_safetensors(&mut vs, weights, config.head_dim())?;
        Ok(BertModel { encoder, pooler, config: config.clone(), load_report, vs })
    }

    /// Runs the model on checked inputs: ids `[batch, seq]`, optional token type ids and an optional
    /// attention mask `[batch, seq]` (1 for real tokens, 0 for padding), without gradients. Every
    /// layer's attention weights come back only when the pass asks ([`Pass::WEIGHTS`]): at 512 tokens
    /// they are 12 MB a layer that nothing but a picture needs.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        token_type_ids: Option<&Tensor>,
        attention_mask: Option<&Tensor>,
        pass: impl Into<Pass>,
    ) -> Result<BertOutput> {
        let _no_grad = tch::no_grad_guard();
        let mask = attention_mask.map(|m| m.unsqueeze(1)); // [batch, 1, seq]: hide padded keys from every query
        let out = self.encoder.try_forward(input_ids, token_type_ids, mask.as_ref(), pass)?;
        let (last_hidden_state, attentions) = (out.last_hidden_state, out.attentions);
        let pooler_output = self.pooler.forward(&last_hidden_state.i((.., 0, ..))).tanh();
        Ok(BertOutput { last_hidden_state, pooler_output, attentions })
    }

    /// Tokenizes a text (or pair) with special tokens and runs the model on it.
    pub fn encode_text(
        &self,
        tokenizer: &Tokenizer,
        text: &str,
        text_b: Option<&str>,
    ) -> Result<(Encoding, BertOutput)> {
        check_tokenizer_fits(tokenizer, &self.config)?;
        let encoding = match text_b {
            Some(b) => tokenizer.encode_pair(text, b, true)?,
            None => tokenizer.encode(text, true)?,
        };
        let device = self.vs.device();
        let output =
            self.forward(&encoding.ids_tensor(device), Some(&encoding.type_ids_tensor(device)), None, Pass::WEIGHTS)?;
        Ok((encoding, output))
    }
}

/// The sentence embedding all-MiniLM-L6-v2 is trained for: the mean of the token vectors (padding left
/// out), scaled to length 1. `[batch, seq, hidden]` → `[batch, hidden]`.
pub fn mean_pooled_embedding(last_hidden_state: &Tensor, attention_mask: Option<&Tensor>) -> Tensor {
    let mask = match attention_mask {
        Some(m) => m.shallow_clone(),
        None => last_hidden_state.ones_like().select(-1, 0), // [batch, seq]
    };
    let mean = crate::pooling::masked_mean(last_hidden_state, &mask); // [batch, hidden]
    let norm = mean.norm_scalaropt_dim(2, [-1], true).clamp_min(1e-12);
    mean / norm
}

/// A tokenizer whose ids run past the model's embedding table would index out of range.
pub fn check_tokenizer_fits(tokenizer: &Tokenizer, config: &BertConfig) -> Result<()> {
    let n = tokenizer.vocab_size() as i64;
    ensure!(
        n <= config.vocab_size,
        "the tokenizer knows {n} tokens but the model's embedding table has {} rows: they belong to different models",
        config.vocab_size
    );
    Ok(())
}

/// How a checkpoint's names map onto ours: an optional `bert.` prefix, old TensorFlow-era LayerNorm
/// names (`gamma`, `beta`), and buffers that are not parameters.
fn normalize_name(name: &str) -> Option<String> {
    let name = name.strip_prefix("bert.").unwrap_or(name);
    if name.ends_with("position_ids") {
        return None; // a constant arange(512), rebuilt on the fly
    }
    let name = name.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias");
    Some(name)
}

/// For the per-head layout: `…attention.self.heads.{h}.{query|key|value}.{weight|bias}` → the fused
/// name and the head index.
fn per_head_source(name: &str) -> Option<(String, i64)> {
    let (before, after) = name.split_once(".self.heads.")?;
    let (head, rest) = after.split_once('.')?;
    Some((format!("{before}.self.{rest}"), head.parse().ok()?))
}

/// Copies every parameter of `vs` from the safetensors file: by name, or as a slice of a fused
/// attention matrix for the per-head layout. Fails on a corrupt file, a missing tensor or a shape that
/// disagrees with the configuration, naming the tensor.
pub fn load_safetensors(vs: &mut nn::VarStore, path: &Path, head_dim: i64) -> Result<LoadReport> {
    if !path.is_file() {
        bail!("no weights at {}: run `make setup`, or pass --model DIR with a model.safetensors", path.display());
    }
    let named = Tensor::read_safetensors(path).map_err(|e| {
        anyhow!(
            "{} is not a readable safetensors file ({}): it may be truncated or corrupt; run `make setup` again",
            path.display(),
            first_line(&e.to_string())
        )
    })?;
    let file: HashMap<String, Tensor> =
        named.into_iter().filter_map(|(n, t)| normalize_name(&n).map(|n| (n, t))).collect();
    let mut used = BTreeSet::new();
    let mut report = LoadReport::default();
    let variables = crate::init::sorted_variables(vs);
    tch::no_grad(|| -> Result<()> {
        for (name, mut var) in variables {
            let source = match per_head_source(&name) {
                Some((fused, head)) => file.get(&fused).map(|t| {
                    used.insert(fused.clone());
                    t.f_narrow(0, head * head_dim, head_dim)
                }),
                None => file.get(&name).map(|t| {
                    used.insert(name.clone());
                    Ok(t.shallow_clone())
                }),
            };
            let Some(source) = source else {
                report.missing.push(name);
                continue;
            };
            let source = source.with_context(|| format!("slicing {name} out of the fused matrix"))?;
            ensure!(
                source.size() == var.size(),
                "{name}: the weights file has shape {:?} but config.json makes it {:?}; the config and the weights do not belong together",
                source.size(),
                var.size()
            );
            var.f_copy_(&source).with_context(|| format!("copying {name}"))?;
        }
        Ok(())
    })?;
    report.unexpected = file.keys().filter(|k| !used.contains(*k)).cloned().collect();
    report.unexpected.sort();
    if !report.missing.is_empty() {
        let shown: Vec<&str> = report.missing.iter().take(5).map(String::as_str).collect();
        bail!(
            "{} has no tensor for {} parameter(s) of the model, e.g. {}: is it a BERT checkpoint matching config.json?",
            path.display(),
            report.missing.len(),
            shown.join(", ")
        );
    }
    Ok(report)
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}
