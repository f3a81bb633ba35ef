//! `anatomy classify train`: one run of chapter 12's recipe in either regime
//! (`transformer_anatomy::classify::run`), with its progress bar and its figures printed.
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{ensure, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tch::Device;
use transformer_anatomy::classify::data::{self, Example};
use transformer_anatomy::classify::features;
use transformer_anatomy::classify::fine_tune::{self, FineTuneOptions};
use transformer_anatomy::classify::frozen::{HeadOptions, Metrics};
use transformer_anatomy::classify::run::{self, Body, FrozenRun};
use transformer_anatomy::classify::sampler::Sampler;
use transformer_anatomy::model_dir::resolve_model_dir;
use transformer_anatomy::seeds;
use transformer_anatomy::training::checkpoint::check_output_path;

use super::{examples, PoolingArg};
use crate::progress::TrainingBar;
use crate::ModelArg;

#[derive(clap::Args)]
pub struct TrainArgs {
    /// Which vector stands for a message: the first token's ([CLS]) or the mean of all real tokens.
    #[arg(long, value_enum, default_value_t = PoolingArg::Mean)]
    pooling: PoolingArg,
    /// Tokens read per message (its opening), [CLS] and [SEP] included: 2 to 512.
    #[arg(long, default_value_t = FineTuneOptions::default().max_len)]
    max_len: usize,
    /// Passes over the training part [default: 40 for the head on the frozen body, 1 with --fine-tune].
    #[arg(long)]
    epochs: Option<usize>,
    /// The peak learning rate [default: 1e-3 for the head on the frozen body, 5e-5 with --fine-tune].
    #[arg(long)]
    lr: Option<f64>,
    /// Messages per batch, for the body's pass and for the head's training.
    #[arg(long, default_value_t = HeadOptions::default().batch)]
    batch: usize,
    /// Use at most N messages of each part, evenly spread over the groups (a quick run).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// The corpus folder [default: .deps/spam-assassin, or $ANATOMY_SPAM_DIR].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Fine-tune the whole body with the head (AdamW, warm-up then linear decay, dropout 0.1, gradients
    /// clipped at 1, the best epoch kept) instead of training the head on frozen features. Seconds a step
    /// on a CPU: the full run takes minutes.
    #[arg(long)]
    fine_tune: bool,
    /// With --fine-tune: stop after N steps in all (a short run).
    #[arg(long, value_name = "N", requires = "fine_tune")]
    steps: Option<usize>,
    /// With --fine-tune: also measure the validation set every N steps (it is measured at each epoch's end).
    #[arg(long, value_name = "N", requires = "fine_tune")]
    eval_every: Option<usize>,
    /// With --fine-tune: train only the top K encoder layers and the head (the embeddings and the layers
    /// below stay frozen, and each step's backward pass is shorter).
    #[arg(long, value_name = "K", requires = "fine_tune")]
    top_layers: Option<usize>,
    /// The seed of the head's first weights, dropout and the order of the batches.
    #[arg(long, default_value_t = HeadOptions::default().seed)]
    seed: i64,
    /// Train once per seed (e.g. `0-4`) and end with the test F1 and accuracy's mean, lowest and highest.
    #[arg(long, value_name = "SEEDS", conflicts_with_all = ["seed", "out"])]
    seeds: Option<String>,
    /// With --fine-tune: which messages share a batch: `random` (shuffled, cut) or `grouped` (of similar
    /// length inside megabatches of 50 batches) [default: grouped; chapter 12 says why].
    #[arg(long, value_parser = ["random", "grouped"], requires = "fine_tune")]
    sampler: Option<String>,
    /// Write what was trained here, as .safetensors with its labels, pooling, maximum length and body: the
    /// head alone (a few kB), or with --fine-tune the whole model (about 90 MB).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// One JSON object: `{"regime", "pooling", "max_len", "train", "validation": {...}, "test": {"accuracy",
    /// "precision", "recall", "f1", "hard_ham_accuracy", "confusion"}, "curve", "seconds", ...}`.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    model: ModelArg,
}

impl TrainArgs {
    fn epochs(&self) -> usize {
        self.epochs.unwrap_or(if self.fine_tune { 1 } else { 40 })
    }

    fn lr(&self) -> f64 {
        self.lr.unwrap_or(if self.fine_tune { 5e-5 } else { 1e-3 })
    }
}

pub fn run(args: TrainArgs, device: Device) -> Result<()> {
    let Some(seeds) = &args.seeds else { return once(&args, args.seed, device).map(drop) };
    let mut runs = Vec::new();
    for seed in seeds::parse(seeds)? {
        runs.push((seed, once(&args, seed, device)?));
    }
    let sweep = run::SeedSpread::of(&runs).expect("at least one seed");
    match args.json {
        true => println!("{}", serde_json::to_string(&sweep)?),
        false => {
            println!("test F1 (spam) {}\ntest accuracy {}", sweep.f1.words(false), sweep.accuracy.words(false))
        }
    }
    Ok(())
}

/// One run with `seed`: its figures printed, its test metrics returned.
fn once(args: &TrainArgs, seed: i64, device: Device) -> Result<Metrics> {
    let started = Instant::now();
    features::check_max_len(args.max_len)?;
    ensure!(args.batch > 0, "--batch must be at least 1");
    ensure!(args.epochs() > 0, "--epochs must be at least 1");
    ensure!(args.limit != Some(0), "--limit must be at least 1");
    if let Some(out) = &args.out {
        check_output_path(out)?;
    }
    let model_dir = resolve_model_dir(args.model.model.clone())?;
    let (tokenizer, mut model) = ModelArg { model: args.model.model.clone() }.pretrained(device)?;
    if let Some(k) = args.top_layers {
        fine_tune::check_top_layers(&model, k)?; // before the corpus is read
    }
    let dir = args.dir.clone().unwrap_or_else(data::data_dir);
    let all = examples(&dir)?;
    let parts = run::parts(&all, args.limit);
    let body = Body { model: &mut model, tokenizer: &tokenizer, dir: &model_dir };
    if args.fine_tune {
        return fine_tune_run(args, seed, &parts, body, started);
    }
    let bar = ProgressBar::with_draw_target(
        None,
        if args.json { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() },
    );
    bar.set_style(
        ProgressStyle::with_template("the body reads the messages {bar:30} {pos}/{len}  {per_sec}  eta {eta}")
            .expect("a template")
            .progress_chars("█▉ "),
    );
    let head = HeadOptions { epochs: args.epochs(), lr: args.lr(), batch: args.batch, seed, ..HeadOptions::default() };
    let options = FrozenRun {
        pooling: args.pooling.pooling(),
        max_len: args.max_len,
        batch: args.batch,
        head,
        cache_dir: &dir,
        out: args.out.as_deref(),
    };
    let report = run::frozen(&body, &parts, &options, &mut |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64)
    })?;
    bar.finish_and_clear();
    if args.json {
        println!("{}", with_seconds(&report, started)?);
        return Ok(report.test);
    }
    println!("{}", report.words(args.epochs()));
    Ok(report.test)
}

/// A run's report as one JSON object, with the seconds since the command started.
fn with_seconds(report: &impl serde::Serialize, started: Instant) -> Result<serde_json::Value> {
    let mut value = serde_json::to_value(report)?;
    value["seconds"] = started.elapsed().as_secs_f64().into();
    Ok(value)
}

fn fine_tune_run(
    args: &TrainArgs,
    seed: i64,
    parts: &[Vec<&Example>; 3],
    body: Body,
    started: Instant,
) -> Result<Metrics> {
    let options = FineTuneOptions {
        pooling: args.pooling.pooling(),
        max_len: args.max_len,
        epochs: args.epochs(),
        max_steps: args.steps,
        batch: args.batch,
        lr: args.lr(),
        eval_every: args.eval_every,
        top_layers: args.top_layers,
        seed,
        sampler: args.sampler.as_deref().map_or(Sampler::DEFAULT, |n| Sampler::from_name(n).expect("clap's values")),
        ..FineTuneOptions::default()
    };
    let per_epoch = parts[0].len().div_ceil(args.batch);
    let total = args.steps.map_or(per_epoch * args.epochs(), |m| m.min(per_epoch * args.epochs()));
    let mut bar = TrainingBar::new(total as u64, !args.json);
    let report = run::fine_tuned(body, parts, options, args.out.as_deref(), &mut |s| {
        bar.show(s.step as u64, s.steps as u64, s.loss, s.lr, &format!("{:.1} messages/s", s.messages_per_s))
    })?;
    if args.json {
        println!("{}", with_seconds(&report, started)?);
    } else {
        let (steps, seconds) = (report.steps.len(), started.elapsed().as_secs_f64());
        let kept = report.best_step;
        println!(
            "fine-tuned {steps} steps in {seconds:.0} s (weights of step {kept} kept); test {}",
            report.test.words()
        );
    }
    Ok(report.test)
}
