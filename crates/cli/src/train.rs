//! `anatomy train`: train an encoder-decoder on a generated task and save it.
use std::path::PathBuf;

use anyhow::Result;
use tch::Device;
use transformer_anatomy::seeds;
use transformer_anatomy::training::sweep::{sweep, SeedRun};
use transformer_anatomy::training::{save, train_with_progress, Task, TrainOptions};

use crate::progress::TrainingBar;

/// The tasks as clap values, read off the library's one list of tasks (`Task::ALL`, `Task::name`).
fn task_parser() -> impl clap::builder::TypedValueParser<Value = Task> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = Task::ALL.map(|t| PossibleValue::new(t.name()).help(t.summary()));
    PossibleValuesParser::new(values).map(|name| Task::from_name(&name).expect("clap accepted only task names"))
}

#[derive(clap::Args)]
pub struct Args {
    /// The task to learn.
    #[arg(long, value_parser = task_parser())]
    task: Task,
    /// Optimizer steps [default: 300 for copy and reverse, 1000 for dates].
    #[arg(long)]
    steps: Option<u64>,
    /// Pairs per step.
    #[arg(long, default_value_t = TrainOptions::for_task(Task::Copy).batch_size)]
    batch: usize,
    /// The model's width [default: 32 for copy and reverse, 64 for dates].
    #[arg(long)]
    d_model: Option<i64>,
    /// Layers in the encoder, and again in the decoder.
    #[arg(long, default_value_t = TrainOptions::for_task(Task::Copy).layers)]
    layers: i64,
    /// Attention heads (must divide --d-model).
    #[arg(long, default_value_t = TrainOptions::for_task(Task::Copy).heads)]
    heads: i64,
    /// Warm-up steps of the learning-rate schedule [default: 100 for reverse, 200 for copy and dates].
    #[arg(long)]
    warmup: Option<u64>,
    /// ε of label smoothing, in [0, 1).
    #[arg(long, default_value_t = TrainOptions::for_task(Task::Copy).label_smoothing)]
    label_smoothing: f64,
    /// Seed for the data, the initial weights and dropout.
    #[arg(long, default_value_t = TrainOptions::for_task(Task::Copy).seed)]
    seed: u64,
    /// Train once per seed (e.g. `1-20`, or `1,4,9`) and print each run's held-out figures and their
    /// mean, lowest and highest (with --json: {"task", "runs": [...], "exact_match": {"mean", "min",
    /// "min_seed", "max", "max_seed", "runs"}, "token_accuracy", "seconds"}).
    #[arg(long, value_name = "SEEDS", conflicts_with_all = ["seed", "output"])]
    seeds: Option<String>,
    /// Average the last N of the 20 snapshots a run takes (1 = keep the final weights) [default: 5].
    #[arg(long)]
    average_last: Option<usize>,
    /// Clip the gradients' global norm to this value.
    #[arg(long)]
    clip: Option<f64>,
    /// Write the trained model here (safetensors, with its task and sizes).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print {"task", "seconds", "tokens_per_s", "steps": [{"step", "loss", "lr"}, ...], "eval": {...}}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, device: Device) -> Result<()> {
    let task = args.task;
    let defaults = TrainOptions::for_task(task);
    let options = TrainOptions {
        steps: args.steps.unwrap_or(defaults.steps),
        batch_size: args.batch,
        d_model: args.d_model.unwrap_or(defaults.d_model),
        layers: args.layers,
        heads: args.heads,
        warmup: args.warmup.unwrap_or(defaults.warmup),
        label_smoothing: args.label_smoothing,
        seed: args.seed,
        average_last: args.average_last.unwrap_or(defaults.average_last),
        clip_grad_norm: args.clip,
        device,
        ..defaults
    };
    options.validate()?;
    if let Some(path) = &args.output {
        // Before the work, not after it: a run must not end in "cannot write".
        transformer_anatomy::training::checkpoint::check_output_path(path)?;
    }
    if let Some(seeds) = &args.seeds {
        let on_run = &mut |r: &SeedRun| {
            if !args.json {
                println!("seed {:>3}: exact match {:.1} %, {:.1} s", r.seed, 100.0 * r.exact_match, r.seconds)
            }
        };
        let sweep = sweep(&options, &seeds::parse(seeds)?, on_run)?;
        match args.json {
            true => println!("{}", serde_json::to_string(&sweep)?),
            false => println!("{}: held-out exact match {}", sweep.task, sweep.exact_match.words(true)),
        }
        return Ok(());
    }
    let mut bar = TrainingBar::new(options.steps, !args.json);
    let (trained, report) = train_with_progress(&options, &mut |p| bar.update(p))?;
    if let Some(path) = &args.output {
        save(&trained, path)?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    println!("{}", report.words(options.eval_size));
    if let Some(path) = &args.output {
        println!("saved {}: try `cargo anatomy translate --checkpoint {} \"…\"`", path.display(), path.display());
    }
    Ok(())
}
