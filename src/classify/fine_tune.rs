//! # Fine-tuning the body with the head
//!
//! The second way to use a pretrained body: train all of it, together with the head, on the task. The
//! gradient of the classification loss now reaches every layer, so the pooled vector itself learns to
//! say "spam". The recipe is the usual one for BERT-like models: AdamW (the crate's fused kernel) with a
//! small learning rate, warmed up over the first tenth of the steps and then decayed linearly to 0, the
//! model's own dropout (0.1) on, gradients clipped to norm 1, and the validation set measured after
//! every epoch (and every `eval_every` steps if asked), the best weights kept. Batches are made of
//! messages of similar length, so that little of each batch is padding. With `top_layers` only the top
//! k encoder layers learn, and the backward pass stops below them. A step costs seconds on a CPU: the
//! full run is opt-in.
use std::path::Path;

use anyhow::{ensure, Result};
use serde::Serialize;
use tch::nn::{self, Module};
use tch::{Device, Kind, Tensor};

use super::data::Example;
use super::features::{read_batch, token_ids_of_all};
use super::frozen::{metrics, HeadConfig, Metrics};
use super::sampler::{self, Sampler, MEGABATCH};
use super::{pool, Pooling};
use crate::pretrained::BertModel;
use crate::tokenize::Tokenizer;
use crate::training::fused_adamw::FusedAdamW;
use crate::Pass;

/// How fine-tuning runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FineTuneOptions {
    pub pooling: Pooling,
    pub max_len: usize,
    pub epochs: usize,
    /// Stop after this many steps in all (a short run), whatever the epochs.
    pub max_steps: Option<usize>,
    pub batch: usize,
    pub lr: f64,
    pub weight_decay: f64,
    /// The share of the steps spent warming the learning rate up from 0.
    pub warmup: f64,
    pub clip: f64,
    pub seed: i64,
    /// Also measure the validation set every this many steps (not only at each epoch's end).
    pub eval_every: Option<usize>,
    /// Train only the top k encoder layers and the head; the embeddings and the layers below stay as
    /// they were. `None` trains the whole body.
    pub top_layers: Option<usize>,
    /// Which messages share a batch ([`super::sampler`]).
    pub sampler: Sampler,
}

impl Default for FineTuneOptions {
    fn default() -> Self {
        FineTuneOptions {
            pooling: Pooling::Mean,
            max_len: 128,
            epochs: 1,
            max_steps: None,
            batch: 32,
            lr: 5e-5,
            weight_decay: 0.01,
            warmup: 0.1,
            clip: 1.0,
            seed: 0,
            eval_every: None,
            top_layers: None,
            sampler: Sampler::DEFAULT,
        }
    }
}

/// One step's loss and learning rate, for the curve and the progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Step {
    pub step: usize,
    pub steps: usize,
    pub loss: f64,
    pub lr: f64,
    pub messages_per_s: f64,
}

/// One measurement of the validation set, after `step` steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValidationPoint {
    pub step: usize,
    pub epoch: usize,
    /// The mean training loss of the steps since the previous measurement.
    pub train_loss: f64,
    pub validation_loss: f64,
    pub validation: Metrics,
}

/// What fine-tuning leaves: the head (its body is the model, changed in place), the curves and the
/// step whose weights were kept (the lowest validation loss).
#[derive(Debug)]
pub struct FineTuned {
    pub classifier: nn::Linear,
    pub steps: Vec<Step>,
    pub evaluations: Vec<ValidationPoint>,
    pub best_step: usize,
}

/// The learning rate at `step` (from 1) of `total`: linear warm-up over `warmup` steps, then linear decay.
pub fn learning_rate(base: f64, step: usize, total: usize, warmup: usize) -> f64 {
    if step <= warmup && warmup > 0 {
        base * step as f64 / warmup as f64
    } else {
        base * (total.saturating_sub(step)) as f64 / (total - warmup).max(1) as f64
    }
}

/// Logits `[b, 2]` for a batch of id lists, in training (`train`) or evaluation mode.
fn logits(model: &BertModel, classifier: &nn::Linear, ids: &[&[i64]], pooling: Pooling, train: bool) -> Result<Tensor> {
    let pass = if train { Pass::TRAIN } else { Pass::EVAL };
    let (hidden, mask) = read_batch(model, ids, pass)?; // [b, s, h]
    let pooled = pool(&hidden, &mask, pooling).dropout(model.config.hidden_dropout_prob, train); // [b, h]
    Ok(classifier.forward(&pooled)) // [b, 2]
}

/// One optimiser step on a batch (id lists and labels): the forward pass in training mode, the loss,
/// the gradients, clipped to norm `clip`, and AdamW's update. Returns the batch's loss. `anatomy bench`
/// times exactly this.
pub fn train_step(
    model: &BertModel,
    classifier: &nn::Linear,
    optimizer: &mut FusedAdamW,
    rows: &[&[i64]],
    labels: &[i64],
    pooling: Pooling,
    clip: f64,
) -> Result<f64> {
    optimizer.zero_grad();
    let out = logits(model, classifier, rows, pooling, true)?;
    let loss = out.cross_entropy_for_logits(&Tensor::from_slice(labels).to_device(out.device()));
    loss.backward();
    optimizer.clip_grad_norm(clip)?;
    optimizer.step()?;
    Ok(loss.double_value(&[]))
}

/// The ids of the examples' texts (tokenized in parallel).
fn ids_of(tokenizer: &Tokenizer, examples: &[&Example], max_len: usize) -> Result<Vec<Vec<i64>>> {
    token_ids_of_all(tokenizer, &examples.iter().map(|e| e.text()).collect::<Vec<_>>(), max_len)
}

/// The mean loss and the metrics of `examples` (evaluation mode, no gradients).
pub fn evaluate(
    model: &BertModel,
    classifier: &nn::Linear,
    tokenizer: &Tokenizer,
    examples: &[&Example],
    options: &FineTuneOptions,
) -> Result<(f64, Metrics)> {
    let _no_grad = tch::no_grad_guard();
    let ids = ids_of(tokenizer, examples, options.max_len)?;
    let (mut predicted, mut loss) = (Vec::with_capacity(examples.len()), 0.0);
    for (chunk, ex) in ids.chunks(options.batch).zip(examples.chunks(options.batch)) {
        let rows: Vec<&[i64]> = chunk.iter().map(Vec::as_slice).collect();
        let out = logits(model, classifier, &rows, options.pooling, false)?;
        let labels = Tensor::from_slice(&ex.iter().map(|e| e.label as i64).collect::<Vec<_>>()).to_device(out.device());
        loss += out.cross_entropy_for_logits(&labels).double_value(&[]) * ex.len() as f64;
        let best = Vec::<i64>::try_from(&out.argmax(-1, false).to_device(Device::Cpu))?;
        predicted.extend(best.into_iter().map(|l| l as usize));
    }
    Ok((loss / examples.len().max(1) as f64, metrics(&predicted, examples)))
}

/// The one bound on `--top-layers`: at least one layer, at most the model's.
pub fn check_top_layers(model: &BertModel, k: usize) -> Result<()> {
    let layers = model.config.num_hidden_layers as usize;
    ensure!((1..=layers).contains(&k), "--top-layers must lie between 1 and {layers} (the model's layers), not {k}");
    Ok(())
}

/// Leaves only the top `k` encoder layers (and anything outside the body, such as the head) trainable:
/// the embeddings and the layers below get no gradient.
pub fn freeze_below(model: &BertModel, k: usize) -> Result<()> {
    check_top_layers(model, k)?;
    let layers = model.config.num_hidden_layers as usize;
    for (name, t) in model.vs.variables() {
        let layer = name.strip_prefix("encoder.layer.").and_then(|r| r.split('.').next()?.parse::<usize>().ok());
        let body = name.starts_with("embeddings.") || name.starts_with("encoder.") || name.starts_with("pooler.");
        let _ = t.set_requires_grad(!body || layer.is_some_and(|l| l >= layers - k));
    }
    Ok(())
}

/// Fine-tunes `model` and a new head on `train`, measuring `validation` after each epoch (and every
/// `eval_every` steps) and keeping the weights of the lowest validation loss. `progress` hears every
/// step.
pub fn fine_tune(
    model: &mut BertModel,
    tokenizer: &Tokenizer,
    train: &[&Example],
    validation: &[&Example],
    options: FineTuneOptions,
    progress: &mut dyn FnMut(&Step),
) -> Result<FineTuned> {
    ensure!(options.batch > 0, "--batch must be at least 1");
    ensure!(options.epochs > 0, "--epochs must be at least 1");
    ensure!(options.eval_every != Some(0), "--eval-every must be at least 1");
    ensure!(!train.is_empty() && !validation.is_empty(), "fine-tuning needs training and validation examples");
    tch::manual_seed(options.seed);
    let hidden = model.config.hidden_size;
    let classifier = crate::init::linear(model.vs.root() / "classifier", hidden, 2);
    if let Some(k) = options.top_layers {
        freeze_below(model, k)?;
    }
    let ids = ids_of(tokenizer, train, options.max_len)?;
    // Each epoch reshuffled into new batches (see `sampler` for why, and how the two ways differ).
    let lengths: Vec<usize> = ids.iter().map(Vec::len).collect();
    let per_epoch = sampler::batches_per_epoch(&lengths, options.batch, options.sampler, MEGABATCH);
    let total = options.max_steps.map_or(per_epoch * options.epochs, |m| m.min(per_epoch * options.epochs));
    let warmup = (options.warmup * total as f64).round() as usize;
    let config = nn::AdamW { wd: options.weight_decay, ..Default::default() };
    let mut optimizer = FusedAdamW::new(&model.vs, config, options.lr)?;
    let (mut steps, mut measured) = (Vec::new(), Measurements::new());
    let mut step = 0;
    for epoch in 1..=options.epochs {
        let order = sampler::epoch(&lengths, options.batch, options.sampler, MEGABATCH);
        for (k, b) in order.iter().enumerate() {
            if step == total {
                break;
            }
            step += 1;
            let started = std::time::Instant::now();
            let rows: Vec<&[i64]> = b.iter().map(|&i| ids[i].as_slice()).collect();
            let labels: Vec<i64> = b.iter().map(|&i| train[i].label as i64).collect();
            let lr = learning_rate(options.lr, step, total, warmup);
            optimizer.set_lr(lr);
            let loss = train_step(model, &classifier, &mut optimizer, &rows, &labels, options.pooling, options.clip)?;
            measured.add(loss, rows.len());
            let messages_per_s = rows.len() as f64 / started.elapsed().as_secs_f64();
            let report = Step { step, steps: total, loss, lr, messages_per_s };
            progress(&report);
            steps.push(report);
            // Measure at every `eval_every` steps, at each epoch's end and at the last step.
            let epoch_end = k + 1 == order.len() || step == total;
            if epoch_end || options.eval_every.is_some_and(|n| step % n == 0) {
                measured.measure((model, &classifier, tokenizer), validation, &options, (step, epoch))?;
            }
        }
        if step == total {
            break;
        }
    }
    measured.restore_best(model, step);
    Ok(FineTuned { classifier, steps, evaluations: measured.evaluations, best_step: measured.best })
}

/// The validation set's measurements so far, the training loss since the last one, and the weights of the
/// best (the lowest validation loss), kept on the CPU.
struct Measurements {
    evaluations: Vec<ValidationPoint>,
    best: usize,
    best_loss: f64,
    kept: Vec<Tensor>,
    since_loss: f64,
    since_seen: usize,
}

impl Measurements {
    fn new() -> Self {
        Measurements {
            evaluations: Vec::new(),
            best: 0,
            best_loss: f64::INFINITY,
            kept: Vec::new(),
            since_loss: 0.0,
            since_seen: 0,
        }
    }

    /// A step's mean loss over its `messages`, into the training loss since the last measurement.
    fn add(&mut self, loss: f64, messages: usize) {
        self.since_loss += loss * messages as f64;
        self.since_seen += messages;
    }

    /// Measures `validation` after `step` steps (in `epoch`), and keeps the weights if they are the best yet.
    fn measure(
        &mut self,
        (model, classifier, tokenizer): (&BertModel, &nn::Linear, &Tokenizer),
        validation: &[&Example],
        options: &FineTuneOptions,
        (step, epoch): (usize, usize),
    ) -> Result<()> {
        let (validation_loss, validation_metrics) = evaluate(model, classifier, tokenizer, validation, options)?;
        self.evaluations.push(ValidationPoint {
            step,
            epoch,
            train_loss: self.since_loss / self.since_seen.max(1) as f64,
            validation_loss,
            validation: validation_metrics,
        });
        (self.since_loss, self.since_seen) = (0.0, 0);
        if validation_loss < self.best_loss {
            (self.best, self.best_loss) = (step, validation_loss);
            self.kept = model.vs.trainable_variables().iter().map(|t| t.to_device(Device::Cpu).copy()).collect();
        }
        Ok(())
    }

    /// The best measurement's weights back in place, unless they are the last step's (`last`).
    fn restore_best(&self, model: &BertModel, last: usize) {
        if self.best != last {
            tch::no_grad(|| {
                for (mut v, k) in model.vs.trainable_variables().into_iter().zip(&self.kept) {
                    v.copy_(k);
                }
            });
        }
    }
}

const FORMAT: &str = "anatomy-classify-fine-tuned";

/// Writes the fine-tuned model — body, pooler and head, every tensor — with its configuration, whole.
/// About 90 MB for MiniLM.
pub fn save(model: &BertModel, config: &HeadConfig, path: &Path) -> Result<()> {
    let named: Vec<(String, Tensor)> = model.vs.variables().into_iter().collect();
    let metadata = std::collections::HashMap::from([
        ("format".to_string(), FORMAT.to_string()),
        ("config".to_string(), serde_json::to_string(config)?),
    ]);
    crate::training::checkpoint::write_safetensors(named, metadata, path)
}

/// Whether `metadata` (of a safetensors file) says it holds a fine-tuned model written by [`save`].
pub fn is_fine_tuned(metadata: &std::collections::HashMap<String, String>) -> bool {
    metadata.get("format").map(String::as_str) == Some(FORMAT)
}

/// Reads a fine-tuned model written by [`save`] (its metadata and tensors, already read from `path`)
/// into `model` (the same body, freshly loaded), and returns its head and configuration. Refuses a file
/// whose tensors do not fit the body. [`super::checkpoint::load`] calls it.
pub(crate) fn from_file_parts(
    path: &Path,
    metadata: &std::collections::HashMap<String, String>,
    mut found: std::collections::HashMap<String, Tensor>,
    model: &BertModel,
) -> Result<(nn::Linear, HeadConfig)> {
    ensure!(
        is_fine_tuned(metadata),
        "{} is not a model written by `cargo anatomy classify train --fine-tune --out`",
        path.display()
    );
    let config: HeadConfig = serde_json::from_str(metadata.get("config").map_or("", String::as_str))
        .map_err(|e| anyhow::anyhow!("{}: its configuration does not parse ({e})", path.display()))?;
    ensure!(
        config.hidden_size == model.config.hidden_size,
        "{} was fine-tuned from a body of hidden size {}, not {}: pass --model with its folder",
        path.display(),
        config.hidden_size,
        model.config.hidden_size
    );
    let classifier =
        crate::init::linear(model.vs.root() / "classifier", model.config.hidden_size, config.labels.len() as i64);
    tch::no_grad(|| -> Result<()> {
        for (name, mut v) in model.vs.variables() {
            let t = found.remove(&name).ok_or_else(|| {
                anyhow::anyhow!("{} has no tensor {name}: it was fine-tuned from another model", path.display())
            })?;
            ensure!(
                t.size() == v.size(),
                "{}: {name} is {:?}, the model's is {:?}: it was fine-tuned from another model",
                path.display(),
                t.size(),
                v.size()
            );
            v.copy_(&t);
        }
        Ok(())
    })?;
    Ok((classifier, config))
}

/// The label probabilities `[n, 2]` of `texts` (evaluation mode, batches of similar length).
pub fn probabilities(
    model: &BertModel,
    classifier: &nn::Linear,
    tokenizer: &Tokenizer,
    texts: &[String],
    pooling: Pooling,
    max_len: usize,
    batch: usize,
) -> Result<Tensor> {
    ensure!(batch > 0, "--batch must be at least 1");
    let _no_grad = tch::no_grad_guard();
    let ids = token_ids_of_all(tokenizer, texts, max_len)?;
    let mut out = Vec::new();
    for chunk in ids.chunks(batch) {
        let rows: Vec<&[i64]> = chunk.iter().map(Vec::as_slice).collect();
        out.push(logits(model, classifier, &rows, pooling, false)?.softmax(-1, Kind::Float));
        // [b, 2]
    }
    Ok(Tensor::cat(&out, 0)) // [n, 2]
}
