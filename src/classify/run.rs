//! One whole run of the chapter's recipe, from the prepared examples to the test set's figures, in
//! either regime: a head on the frozen body's pooled features ([`frozen`]), or the body fine-tuned with
//! its head ([`fine_tuned`]). `anatomy classify train` prints what these return; a notebook or a sweep
//! over seeds can call them the same way.
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;

use super::checkpoint::head_config;
use super::data::{self, Example, Part};
use super::features::{self, Cache};
use super::fine_tune::{self, FineTuneOptions, Step, ValidationPoint};
use super::frozen::{metrics, train_head, EpochLoss, HeadOptions, Metrics};
use super::Pooling;
use crate::pretrained::BertModel;
use crate::tokenize::Tokenizer;

/// The pretrained body a run starts from, with its tokenizer and the folder it came from (recorded in a
/// checkpoint, and part of the feature cache's key).
pub struct Body<'a> {
    pub model: &'a mut BertModel,
    pub tokenizer: &'a Tokenizer,
    pub dir: &'a Path,
}

/// The examples of `dir` (the corpus folder): `examples.jsonl`, prepared first from `raw.jsonl` when only
/// the corpus is there (`announce` hears that it is), and "run `make setup`" when neither is.
pub fn examples(dir: &Path, announce: &mut dyn FnMut()) -> Result<Vec<Example>> {
    let path = dir.join("examples.jsonl");
    if path.exists() {
        return data::read_examples(&path);
    }
    if !dir.join("raw.jsonl").exists() {
        bail!("the spam corpus is missing in {}: run `make setup`", dir.display());
    }
    announce();
    Ok(prepare(dir)?.0)
}

/// The corpus in `dir` made into examples and written to `dir/examples.jsonl` (`anatomy classify prepare`).
#[cfg(feature = "mail")]
pub fn prepare(dir: &Path) -> Result<(Vec<Example>, data::Counts, PathBuf)> {
    let (examples, counts) = data::prepare(&data::read_raw(&dir.join("raw.jsonl"))?)?;
    let out = dir.join("examples.jsonl");
    data::write_examples(&out, &examples)?;
    Ok((examples, counts, out))
}

#[cfg(not(feature = "mail"))]
fn prepare(dir: &Path) -> Result<(Vec<Example>, data::Counts, PathBuf)> {
    bail!("{} has no examples.jsonl yet: run `cargo anatomy classify prepare` first", dir.display())
}

/// The three parts, each cut to at most `limit` messages spread over the groups.
pub fn parts(all: &[Example], limit: Option<usize>) -> [Vec<&Example>; 3] {
    [Part::Train, Part::Validation, Part::Test].map(|p| data::part(all, p, limit))
}

/// How a run on the frozen body goes: the pooled vector, the tokens read, the batch of the body's pass,
/// the head's training, the feature cache's folder and where to keep the head.
pub struct FrozenRun<'a> {
    pub pooling: Pooling,
    pub max_len: usize,
    pub batch: usize,
    pub head: HeadOptions,
    pub cache_dir: &'a Path,
    pub out: Option<&'a Path>,
}

/// What a run on the frozen body measured.
#[derive(Debug, Serialize)]
pub struct FrozenReport {
    pub regime: &'static str,
    pub pooling: Pooling,
    pub max_len: usize,
    pub train: usize,
    pub validation: Metrics,
    pub test: Metrics,
    pub curve: Vec<EpochLoss>,
    pub features_cached: bool,
    pub feature_seconds: f64,
    /// How fast the body read (none when the cache answered).
    pub messages_per_s: Option<f64>,
    pub head_seconds: f64,
    /// Messages the body's pass covered (every part used).
    #[serde(skip)]
    pub messages: usize,
}

impl FrozenReport {
    /// The run in three lines, as `anatomy classify train` prints it: the body's pass, the head's training
    /// (`epochs`), the test figures and the confusion matrix.
    pub fn words(&self, epochs: usize) -> String {
        let how = match self.messages_per_s {
            None => "read from the cache".to_string(),
            Some(rate) => format!("{rate:.0} messages/s"),
        };
        let [[tn, fp], [fn_, tp]] = self.test.confusion;
        format!(
            "body: {} messages read in {:.1} s ({how}); head: {epochs} epochs in {:.1} s\npooling {:?}, {} tokens: \
             test {}\nconfusion (rows: true ham, spam; columns: predicted ham, spam): [{tn} {fp}] [{fn_} {tp}]",
            self.messages,
            self.feature_seconds,
            self.head_seconds,
            self.pooling,
            self.max_len,
            self.test.words()
        )
    }
}

/// Trains the chapter's head on the frozen body: one pass of the body over every message used (kept on
/// disk under what it was made from), then the head on the training part, chosen on the validation part,
/// measured on the test part. `progress(done, total)` hears the body's pass.
pub fn frozen(
    body: &Body,
    parts: &[Vec<&Example>; 3],
    run: &FrozenRun,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<FrozenReport> {
    let used: Vec<&Example> = parts.iter().flatten().copied().collect();
    let started = Instant::now();
    let cache = Cache { dir: run.cache_dir, model_dir: body.dir };
    let (features, cached) =
        features::cached(body.model, body.tokenizer, &used, (run.max_len, run.batch), cache, progress)?;
    let feature_seconds = started.elapsed().as_secs_f64();
    let x = features.get(run.pooling);
    let (n_train, n_val) = (parts[0].len() as i64, parts[1].len() as i64);
    let slice = |from: i64, n: i64| x.narrow(0, from, n);
    let labels = |p: &[&Example]| p.iter().map(|e| e.label).collect::<Vec<_>>();
    let head_start = Instant::now();
    let head =
        train_head((&slice(0, n_train), &labels(&parts[0])), (&slice(n_train, n_val), &labels(&parts[1])), run.head)?;
    let head_seconds = head_start.elapsed().as_secs_f64();
    if let Some(out) = run.out {
        head.save(out, &head_config(run.pooling, run.max_len, body.dir, body.model))?;
    }
    Ok(FrozenReport {
        regime: "frozen",
        pooling: run.pooling,
        max_len: run.max_len,
        train: parts[0].len(),
        validation: metrics(&head.predict(&slice(n_train, n_val)), &parts[1]),
        test: metrics(&head.predict(&slice(n_train + n_val, parts[2].len() as i64)), &parts[2]),
        curve: head.curve,
        features_cached: cached,
        feature_seconds,
        messages_per_s: (!cached).then(|| used.len() as f64 / feature_seconds),
        head_seconds,
        messages: used.len(),
    })
}

/// What fine-tuning measured.
#[derive(Debug, Serialize)]
pub struct FineTuneReport {
    pub regime: &'static str,
    pub pooling: Pooling,
    pub max_len: usize,
    pub train: usize,
    pub options: FineTuneOptions,
    pub evaluations: Vec<ValidationPoint>,
    pub best_step: usize,
    pub steps: Vec<Step>,
    pub test: Metrics,
    pub test_loss: f64,
}

/// Fine-tunes the body with a new head on the training part (the body changes in place; the weights of
/// the step with the lowest validation loss are kept), measures the test part and, with `out`, keeps the
/// whole model. `progress` hears every step.
pub fn fine_tuned(
    body: Body,
    parts: &[Vec<&Example>; 3],
    options: FineTuneOptions,
    out: Option<&Path>,
    progress: &mut dyn FnMut(&Step),
) -> Result<FineTuneReport> {
    let tuned = fine_tune::fine_tune(body.model, body.tokenizer, &parts[0], &parts[1], options, progress)?;
    let (test_loss, test) = fine_tune::evaluate(body.model, &tuned.classifier, body.tokenizer, &parts[2], &options)?;
    if let Some(out) = out {
        fine_tune::save(body.model, &head_config(options.pooling, options.max_len, body.dir, body.model), out)?;
    }
    Ok(FineTuneReport {
        regime: "fine-tune",
        pooling: options.pooling,
        max_len: options.max_len,
        train: parts[0].len(),
        options,
        evaluations: tuned.evaluations,
        best_step: tuned.best_step,
        steps: tuned.steps,
        test,
        test_loss,
    })
}

/// The test figures of the same run over several seeds (`anatomy classify train --seeds 0-4`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedSpread {
    pub runs: Vec<(i64, Metrics)>,
    pub f1: crate::seeds::Spread,
    pub accuracy: crate::seeds::Spread,
}

impl SeedSpread {
    /// The spread of F1 (spam) and accuracy over `(seed, test metrics)` runs; `None` for no run.
    pub fn of(runs: &[(i64, Metrics)]) -> Option<SeedSpread> {
        let spread = |f: fn(&Metrics) -> f64| {
            crate::seeds::Spread::of(&runs.iter().map(|(s, m)| (*s, f(m))).collect::<Vec<_>>())
        };
        Some(SeedSpread { runs: runs.to_vec(), f1: spread(|m| m.f1)?, accuracy: spread(|m| m.accuracy)? })
    }
}
