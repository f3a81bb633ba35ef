//! Training: random blocks of the text, the next character as the target everywhere, AdamW with
//! nanoGPT's settings (β₂ 0.99, weight decay 0.1) in LibTorch's fused kernel ([`FusedAdamW`]), a linear
//! warm-up then a cosine decay to a tenth of the rate, and gradients clipped at norm 1. The held-out loss
//! is measured on *every* non-overlapping block of the last 10 %, so two runs (or two implementations)
//! compare exactly.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};
use serde::Serialize;
use tch::nn;
use tch::{Device, Kind, Tensor};

use super::model::{GptConfig, GptModel};
use super::text::{CharVocab, Corpus};
use crate::attention::Pass;
use crate::training::checkpoint::{copy_named, read_safetensors, write_safetensors};
use crate::training::FusedAdamW;

const FORMAT: &str = "transformer-anatomy-gpt";

/// What `anatomy gpt train` does; the defaults are nanoGPT's laptop-CPU configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct GptTrainOptions {
    /// The text to learn; `None` means Moby-Dick, as the set-up fetched it.
    pub text: Option<PathBuf>,
    pub steps: u64,
    pub layers: i64,
    pub heads: i64,
    pub d_model: i64,
    pub context: i64,
    pub batch: i64,
    pub lr: f64,
    pub warmup: u64,
    pub seed: i64,
    pub dropout: f64,
    /// Measure the held-out loss every this many steps as well (0: only at the end).
    pub eval_every: u64,
    pub device: Device,
}

impl Default for GptTrainOptions {
    fn default() -> Self {
        GptTrainOptions {
            text: None,
            steps: 2000,
            layers: 4,
            heads: 4,
            d_model: 128,
            context: 64,
            batch: 12,
            lr: 1e-3,
            warmup: 100,
            seed: 1337,
            dropout: 0.0,
            eval_every: 0,
            device: Device::Cpu,
        }
    }
}

impl GptTrainOptions {
    /// The model these options train, for a vocabulary of `vocab_size` characters.
    pub fn model_config(&self, vocab_size: usize) -> GptConfig {
        GptConfig {
            vocab_size: vocab_size as i64,
            layers: self.layers,
            heads: self.heads,
            d_model: self.d_model,
            context: self.context,
            dropout: self.dropout,
        }
    }

    /// nanoGPT's optimiser: AdamW with β₂ 0.99 and weight decay 0.1 (on every parameter, as tch applies it).
    pub fn optimizer(&self, vs: &nn::VarStore) -> Result<FusedAdamW> {
        FusedAdamW::new(vs, nn::AdamW { beta1: 0.9, beta2: 0.99, wd: 0.1, eps: 1e-8, amsgrad: false }, self.lr)
    }
}

/// One optimiser step on a random batch: the loss, back-propagation, gradients clipped at norm 1, the
/// update. Returns the batch's loss (before the update).
pub fn train_step(
    trained: &TrainedGpt,
    optimizer: &mut FusedAdamW,
    corpus: &Corpus,
    options: &GptTrainOptions,
) -> Result<Tensor> {
    let (x, y) = corpus.batch(options.batch, options.context, options.device);
    let loss = trained.model.loss(&x, &y, Pass::TRAIN)?;
    optimizer.zero_grad();
    loss.backward();
    optimizer.clip_grad_norm(1.0)?;
    optimizer.step()?;
    Ok(loss)
}

/// Where the set-up puts Moby-Dick.
pub fn default_text() -> PathBuf {
    crate::project::project_root().join(".deps/text/moby-dick.txt")
}

/// The learning rate at `step` (1-based): linear warm-up to `lr`, then a cosine down to `lr / 10` at the
/// last step.
pub fn gpt_learning_rate(step: u64, steps: u64, lr: f64, warmup: u64) -> f64 {
    let min = lr / 10.0;
    if step <= warmup {
        return lr * step as f64 / warmup.max(1) as f64;
    }
    let progress = (step - warmup) as f64 / (steps.saturating_sub(warmup)).max(1) as f64;
    min + 0.5 * (1.0 + (std::f64::consts::PI * progress.min(1.0)).cos()) * (lr - min)
}

/// A trained model with what it needs to read and write text.
#[derive(Debug)]
pub struct TrainedGpt {
    pub vocab: CharVocab,
    pub model: GptModel,
    pub vs: nn::VarStore,
}

impl TrainedGpt {
    pub fn new(vocab: CharVocab, config: &GptConfig, device: Device) -> Result<Self> {
        let vs = nn::VarStore::new(device);
        let model = GptModel::new(vs.root(), config)?;
        model.init_weights(&vs);
        Ok(TrainedGpt { vocab, model, vs })
    }

    pub fn named_parameters(&self) -> Vec<(String, Tensor)> {
        crate::init::sorted_variables(&self.vs)
    }

    /// The mean cross-entropy, in nats per character, over every non-overlapping block of the held-out
    /// text (evaluation: no dropout).
    pub fn val_loss(&self, corpus: &Corpus) -> Result<f64> {
        let _no_grad = tch::no_grad_guard();
        let context = self.model.config.context;
        let (inputs, targets) = corpus.val_blocks(context);
        let device = self.vs.device();
        let (mut total, mut count) = (0.0, 0i64);
        for start in (0..inputs.size()[0]).step_by(64) {
            let n = 64.min(inputs.size()[0] - start);
            let (x, y) = (inputs.narrow(0, start, n).to_device(device), targets.narrow(0, start, n).to_device(device));
            let logits = self.model.forward(&x, 0, Pass::EVAL, None)?.logits;
            let sum = logits.view([-1, self.model.config.vocab_size]).log_softmax(-1, Kind::Float).nll_loss_nd(
                &y.view([-1]),
                None::<Tensor>,
                tch::Reduction::Sum,
                -100,
            );
            total += sum.double_value(&[]);
            count += n * context;
        }
        Ok(total / count as f64)
    }
}

/// One logged step.
#[derive(Debug, Clone, Serialize)]
pub struct GptStep {
    pub step: u64,
    pub loss: f64,
    pub lr: f64,
}

/// What a training run reports (`anatomy gpt train --json` prints it).
#[derive(Debug, Clone, Serialize)]
pub struct GptReport {
    /// The training steps' time (the held-out evaluations not included).
    pub seconds: f64,
    pub steps: Vec<GptStep>,
    /// The held-out loss after the last step.
    pub val_loss: f64,
    /// `(step, held-out loss)` every `eval_every` steps, the last step included.
    pub held_out: Vec<(u64, f64)>,
}

impl GptReport {
    /// What `anatomy gpt train --json` prints: the time, the steps and the held-out loss.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({"seconds": self.seconds, "steps": self.steps, "eval": {"val_loss": self.val_loss}})
    }

    /// The run in a line, for the text it trained on.
    pub fn words(&self, text: &std::path::Path) -> String {
        let last = self.steps.last().map_or(f64::NAN, |s| s.loss);
        format!(
            "trained on {} for {} steps in {:.1} s: training loss {last:.3}, held-out loss {:.3} nats per character",
            text.display(),
            self.steps.len(),
            self.seconds,
            self.val_loss
        )
    }
}

/// Progress after each step, for a bar or a printed line.
#[derive(Debug, Clone, Copy)]
pub struct GptProgress {
    pub step: u64,
    pub steps: u64,
    pub loss: f64,
    pub lr: f64,
    pub chars_per_s: f64,
    pub elapsed_s: f64,
}

/// Reads the text, builds the model and trains it; `progress` is called after every step.
pub fn train_gpt(
    options: &GptTrainOptions,
    progress: &mut dyn FnMut(&GptProgress),
) -> Result<(TrainedGpt, Corpus, GptReport)> {
    let path = options.text.clone().unwrap_or_else(default_text);
    if options.text.is_none() && !path.exists() {
        bail!("Moby-Dick is not at {}: run `make setup` (or give --text FILE)", path.display());
    }
    let corpus = Corpus::from_file(&path, options.context)?;
    let config = options.model_config(corpus.vocab.len()); // GptModel::new validates it
    ensure!(options.steps > 0 && options.batch > 0, "--steps and --batch must be at least 1");
    ensure!(options.lr > 0.0 && options.lr.is_finite(), "--lr must be a positive number, got {}", options.lr);
    tch::manual_seed(options.seed);
    let trained = TrainedGpt::new(corpus.vocab.clone(), &config, options.device)?;
    let mut optimizer = options.optimizer(&trained.vs)?;
    let began = Instant::now();
    let mut evaluating = 0.0; // seconds spent on held-out evaluations, left out of the training time
    let mut held_out = Vec::new();
    let mut steps = Vec::with_capacity(options.steps as usize);
    for step in 1..=options.steps {
        let lr = gpt_learning_rate(step, options.steps, options.lr, options.warmup);
        optimizer.set_lr(lr);
        let loss = train_step(&trained, &mut optimizer, &corpus, options)?.double_value(&[]);
        ensure!(loss.is_finite(), "the loss became {loss} at step {step}: try a smaller --lr");
        steps.push(GptStep { step, loss, lr });
        if options.eval_every > 0 && step % options.eval_every == 0 && step < options.steps {
            let start = Instant::now();
            held_out.push((step, trained.val_loss(&corpus)?));
            evaluating += start.elapsed().as_secs_f64();
        }
        let elapsed_s = began.elapsed().as_secs_f64() - evaluating;
        let chars_per_s = (step as i64 * options.batch * options.context) as f64 / elapsed_s.max(1e-9);
        progress(&GptProgress { step, steps: options.steps, loss, lr, chars_per_s, elapsed_s });
    }
    let seconds = began.elapsed().as_secs_f64() - evaluating;
    let val_loss = trained.val_loss(&corpus)?;
    held_out.push((options.steps, val_loss));
    Ok((trained, corpus, GptReport { seconds, steps, val_loss, held_out }))
}

/// Writes the model with its vocabulary and sizes in the metadata (atomically: the file appears whole).
pub fn save_gpt(trained: &TrainedGpt, path: &Path) -> Result<()> {
    let chars: String = trained.vocab.chars.iter().collect();
    let metadata = HashMap::from([
        ("format".to_string(), FORMAT.to_string()),
        ("config".to_string(), serde_json::to_string(&trained.model.config)?),
        ("vocab".to_string(), serde_json::to_string(&chars)?),
    ]);
    write_safetensors(trained.named_parameters(), metadata, path)
}

/// Reads a model written by [`save_gpt`].
pub fn load_gpt(path: &Path, device: Device) -> Result<TrainedGpt> {
    let (metadata, tensors) = read_safetensors(path, "cargo anatomy gpt train -o FILE")?;
    if metadata.get("format").map(String::as_str) != Some(FORMAT) {
        bail!(
            "{} is not a checkpoint of `cargo anatomy gpt train` (its metadata says format {:?}): give a GPT checkpoint",
            path.display(),
            metadata.get("format").map(String::as_str).unwrap_or("none")
        );
    }
    let config: GptConfig = serde_json::from_str(metadata.get("config").map_or("", String::as_str))
        .with_context(|| format!("{}: the configuration in the metadata does not parse", path.display()))?;
    let chars: String = serde_json::from_str(metadata.get("vocab").map_or("", String::as_str))
        .with_context(|| format!("{}: the vocabulary in the metadata does not parse", path.display()))?;
    let vocab = CharVocab { chars: chars.chars().collect() };
    ensure!(vocab.len() as i64 == config.vocab_size, "{}: the vocabulary does not match the sizes", path.display());
    let trained = TrainedGpt::new(vocab, &config, device)?;
    copy_named(trained.named_parameters(), tensors).with_context(|| format!("loading {}", path.display()))?;
    Ok(trained)
}
