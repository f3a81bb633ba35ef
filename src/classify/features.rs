//! # The body as a feature extractor
//!
//! With the body frozen, each message passes through MiniLM once: tokenized, cut to `max_len` tokens
//! (the opening of the message, `[CLS]` first and `[SEP]` last, as Hugging Face truncates), padded
//! within its batch and run without autograd's bookkeeping. Batches are made of messages of similar
//! length, so padding costs little. Both poolings come from the same pass, and the result can be kept
//! on disk, so that a second run (or the other pooling) costs seconds.
use std::path::Path;

use anyhow::{ensure, Context, Result};
use tch::{Device, Tensor};

use super::data::Example;
use super::{pool, Pooling};
use crate::inference_mode::inference_mode_guard;
use crate::pretrained::BertModel;
use crate::tokenize::Tokenizer;
use crate::Pass;

/// The pooled last hidden state of every text, `[n, hidden]` each.
#[derive(Debug)]
pub struct Features {
    pub cls: Tensor,
    pub mean: Tensor,
}

impl Features {
    /// The features of one pooling.
    pub fn get(&self, pooling: Pooling) -> &Tensor {
        match pooling {
            Pooling::Cls => &self.cls,
            Pooling::Mean => &self.mean,
        }
    }
}

/// The one bound on `--max-len`: room for `[CLS]` and `[SEP]`, and no more than MiniLM's 512 positions.
pub fn check_max_len(max_len: usize) -> Result<()> {
    ensure!(
        (2..=512).contains(&max_len),
        "--max-len must lie between 2 and 512 (the model's positions), not {max_len}"
    );
    Ok(())
}

/// A text's ids, `[CLS] … [SEP]`, at most `max_len` of them (an empty text is `[CLS] [SEP]`).
pub fn token_ids(tokenizer: &Tokenizer, text: &str, max_len: usize) -> Result<Vec<i64>> {
    Ok(token_ids_of_all(tokenizer, &[text], max_len)?.remove(0))
}

/// [`token_ids`] of many texts, tokenized in parallel.
pub fn token_ids_of_all(tokenizer: &Tokenizer, texts: &[impl AsRef<str>], max_len: usize) -> Result<Vec<Vec<i64>>> {
    check_max_len(max_len)?;
    let sep = tokenizer.token_to_id("[SEP]").context("the tokenizer has no [SEP]")?;
    // Only the opening is read: a few characters per token is plenty, and huge messages stay cheap.
    let openings: Vec<String> = texts.iter().map(|t| t.as_ref().chars().take(max_len * 16).collect()).collect();
    let openings: Vec<&str> = openings.iter().map(String::as_str).collect();
    let encodings = tokenizer.encode_batch(&openings, true)?;
    Ok(encodings
        .into_iter()
        .map(|e| {
            let mut ids = e.input_ids;
            if ids.len() > max_len {
                ids.truncate(max_len - 1);
                ids.push(sep);
            }
            ids
        })
        .collect())
}

/// A batch of id lists as `[b, s]` ids and the `[b, s]` mask (1 for real tokens), padded with 0.
pub fn batch(ids: &[&[i64]], device: Device) -> (Tensor, Tensor) {
    let s = ids.iter().map(|i| i.len()).max().unwrap_or(1);
    let mut flat = Vec::with_capacity(ids.len() * s);
    let mut mask = Vec::with_capacity(ids.len() * s);
    for row in ids {
        flat.extend(row.iter().copied().chain(std::iter::repeat_n(0, s - row.len())));
        mask.extend(std::iter::repeat_n(1i64, row.len()).chain(std::iter::repeat_n(0, s - row.len())));
    }
    let shape = [ids.len() as i64, s as i64];
    (Tensor::from_slice(&flat).view(shape).to_device(device), Tensor::from_slice(&mask).view(shape).to_device(device))
}

/// The body's last hidden state `[b, s, h]` for a batch of id lists, with the padding mask `[b, s]` that
/// pooling needs. When no row is padded, every position may attend to every other, so the body gets no
/// mask at all: libtorch's fused attention runs faster without one (Hugging Face drops an all-ones mask
/// for the same reason).
pub fn read_batch(model: &BertModel, rows: &[&[i64]], pass: Pass) -> Result<(Tensor, Tensor)> {
    let (input, mask) = batch(rows, model.vs.device());
    let padded = rows.iter().any(|r| r.len() != rows[0].len());
    let attend = padded.then(|| mask.unsqueeze(1)); // [b, 1, s]: hide padded keys from every query
    let hidden = model.encoder.try_forward(&input, None, attend.as_ref(), pass)?.last_hidden_state; // [b, s, h]
    Ok((hidden, mask))
}

/// Runs the frozen body over `texts` in batches of `batch_size` messages of similar length; `progress`
/// hears (texts done, total) after each batch.
pub fn extract(
    model: &BertModel,
    tokenizer: &Tokenizer,
    texts: &[String],
    max_len: usize,
    batch_size: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Features> {
    ensure!(batch_size > 0, "--batch must be at least 1");
    let ids = token_ids_of_all(tokenizer, texts, max_len)?;
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| ids[i].len());
    let device = model.vs.device();
    let (mut cls, mut mean) = (Vec::new(), Vec::new());
    let inference = inference_mode_guard(); // read only: no autograd bookkeeping
    let mut done = 0;
    for chunk in order.chunks(batch_size) {
        let rows: Vec<&[i64]> = chunk.iter().map(|&i| ids[i].as_slice()).collect();
        let (out, mask) = read_batch(model, &rows, Pass::EVAL)?; // [b, s, h]
        cls.push(pool(&out, &mask, Pooling::Cls)); // [b, h]
        mean.push(pool(&out, &mask, Pooling::Mean));
        done += chunk.len();
        progress(done, texts.len());
    }
    // Back to the texts' order: row k of the sorted batches is text order[k].
    let mut inverse = vec![0i64; order.len()];
    for (k, &i) in order.iter().enumerate() {
        inverse[i] = k as i64;
    }
    let inverse = Tensor::from_slice(&inverse).to_device(device);
    let unsort = |parts: &[Tensor]| Tensor::cat(parts, 0).index_select(0, &inverse); // [n, h]
    let (cls, mean) = (unsort(&cls), unsort(&mean));
    drop(inference);
    // Plain tensors again (made outside inference mode), so that a head can be trained on them.
    Ok(Features { cls: cls.copy(), mean: mean.copy() })
}

/// Where [`cached`] keeps features: a folder, and the model folder the body came from (part of what a
/// cache file must match).
#[derive(Debug, Clone, Copy)]
pub struct Cache<'a> {
    pub dir: &'a Path,
    pub model_dir: &'a Path,
}

/// The features of `examples`, read from a cache file if one was made from the same model folder,
/// maximum length and examples, computed (and then kept there) if not. Also says whether the cache
/// answered. `progress` hears (texts done, total) while the body reads.
pub fn cached(
    model: &BertModel,
    tokenizer: &Tokenizer,
    examples: &[&Example],
    (max_len, batch_size): (usize, usize),
    Cache { dir, model_dir }: Cache,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Features, bool)> {
    // What the features were made from: a change to any of it makes a new file.
    let ids = examples.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, e| {
        e.id.bytes().fold(h, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
    });
    let key = format!("{}|{}|{max_len}|{ids:x}", model_dir.display(), model.config.hidden_size);
    let path = dir.join(format!("features-len{max_len}-{}.safetensors", examples.len()));
    if let Some(features) = load(&path, &key, model.vs.device()) {
        return Ok((features, true));
    }
    let texts: Vec<String> = examples.iter().map(|e| e.text()).collect();
    let features = extract(model, tokenizer, &texts, max_len, batch_size, progress)?;
    save(&path, &features, &key)?;
    Ok((features, false))
}

/// Saves features with what they were made from (`key`: the model, the maximum length and the ids),
/// written whole.
pub fn save(path: &Path, features: &Features, key: &str) -> Result<()> {
    let named =
        vec![("cls".to_string(), features.cls.shallow_clone()), ("mean".to_string(), features.mean.shallow_clone())];
    let metadata = std::collections::HashMap::from([("key".to_string(), key.to_string())]);
    crate::training::checkpoint::write_safetensors(named, metadata, path)
}

/// The features saved at `path` if they were made from the same `key`; `None` otherwise.
pub fn load(path: &Path, key: &str, device: Device) -> Option<Features> {
    let (metadata, mut found) =
        crate::training::checkpoint::read_safetensors(path, "cargo anatomy classify train").ok()?;
    if metadata.get("key").map(String::as_str) != Some(key) {
        return None;
    }
    Some(Features { cls: found.remove("cls")?.to_device(device), mean: found.remove("mean")?.to_device(device) })
}
