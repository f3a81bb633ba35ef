//! `anatomy classify`: chapter 12's spam filter. `prepare` turns the corpus set-up fetched into the
//! labelled examples and their one split (`.deps/spam-assassin/examples.jsonl`); `train` trains the
//! chapter's head on the frozen body's pooled features (or fine-tunes the body with it: `train.rs`) and
//! reports the test metrics; `eval` and `predict` use what `train --out` kept.
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{ensure, Result};
use tch::Device;
use transformer_anatomy::classify::checkpoint::Loaded;
use transformer_anatomy::classify::data::{self, Example, Part, LABELS};
use transformer_anatomy::classify::run;
use transformer_anatomy::classify::Pooling;
use transformer_anatomy::model_dir::resolve_model_dir;

use crate::ModelArg;

mod train;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Decode the corpus (`make setup` fetches it) into labelled examples: Subject and plain-text body,
    /// copies dropped, one seeded 80/10/10 split stratified by label; writes DIR/examples.jsonl.
    Prepare {
        /// The corpus folder (raw.jsonl in, examples.jsonl out) [default: .deps/spam-assassin, or
        /// $ANATOMY_SPAM_DIR].
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Print the counts as JSON: `{"raw": {group: n}, "duplicates", "parts": {part: [ham, spam]}}`.
        #[arg(long)]
        json: bool,
    },
    /// Train the chapter's head on the frozen body: MiniLM's pooled last hidden state of each message
    /// (computed once, then kept in the corpus folder), a linear map to ham/spam; report the test set's
    /// accuracy, precision, recall, F1 (spam), the hard-ham slice and the confusion matrix.
    Train(train::TrainArgs),
    /// Evaluate what `train --out` wrote (a head, or a fine-tuned model) on the test set.
    Eval {
        checkpoint: PathBuf,
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        #[arg(long, default_value_t = transformer_anatomy::classify::frozen::HeadOptions::default().batch)]
        batch: usize,
        /// One JSON object: `{"regime", "test": {"accuracy", "precision", "recall", "f1", "hard_ham_accuracy",
        /// "confusion"}, "pooling", "max_len", "seconds"}`.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        model: ModelArg,
    },
    /// Label texts with what `train --out` wrote (a head, or a fine-tuned model): ham or spam, the
    /// probability of that label, and the five tokens that mattered most (mean pooling: each token's share
    /// of the decision, towards the label; [CLS] pooling: the last layer's attention from [CLS]).
    Predict {
        checkpoint: PathBuf,
        /// The texts (one message each; the Subject may be its first line).
        texts: Vec<String>,
        /// Read one message from a UTF-8 file instead.
        #[arg(long, value_name = "FILE", conflicts_with = "texts")]
        file: Option<PathBuf>,
        /// One JSON object per text: `{"label", "probability", "tokens": [{"token", "weight"}, ...]}`, with
        /// mean pooling also `"special_tokens"` and `"bias_and_centring"` (chapter 12).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        model: ModelArg,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum PoolingArg {
    Cls,
    Mean,
}

impl PoolingArg {
    pub(crate) fn pooling(self) -> Pooling {
        match self {
            PoolingArg::Cls => Pooling::Cls,
            PoolingArg::Mean => Pooling::Mean,
        }
    }
}

/// The examples, prepared first if only the corpus is there.
pub(crate) fn examples(dir: &Path) -> Result<Vec<Example>> {
    run::examples(dir, &mut || eprintln!("preparing the examples first (cargo anatomy classify prepare) ..."))
}

pub fn run(args: Args, device: impl FnOnce() -> Result<Device>) -> Result<()> {
    match args.command {
        Command::Train(a) => train::run(a, device()?),
        Command::Eval { checkpoint, dir, batch, json, model } => eval(&checkpoint, dir, batch, json, model, device()?),
        Command::Predict { checkpoint, texts, file, json, model } => {
            predict(&checkpoint, texts, file, json, model, device()?)
        }
        Command::Prepare { dir, json } => {
            let (examples, counts, out) = run::prepare(&dir.unwrap_or_else(data::data_dir))?;
            if json {
                println!("{}", serde_json::to_string(&counts)?);
            } else {
                let raw_total: usize = counts.raw.values().sum();
                println!(
                    "{raw_total} messages, {} dropped as copies of an earlier Subject and body",
                    counts.duplicates
                );
                for (part, [ham, spam]) in &counts.parts {
                    println!("  {part:<10} {:>5} {}, {:>5} {}", ham, LABELS[0], spam, LABELS[1]);
                }
                println!("wrote {} examples to {}", examples.len(), out.display());
            }
            Ok(())
        }
    }
}

/// A checkpoint with the body and tokenizer of `--model`.
fn open(checkpoint: &Path, model: ModelArg, device: Device) -> Result<Loaded> {
    let model_dir = resolve_model_dir(model.model.clone())?;
    let (tokenizer, body) = model.pretrained(device)?;
    Loaded::open(checkpoint, &model_dir, tokenizer, body)
}

fn eval(
    checkpoint: &Path,
    dir: Option<PathBuf>,
    batch: usize,
    json: bool,
    model: ModelArg,
    device: Device,
) -> Result<()> {
    let started = Instant::now();
    ensure!(batch > 0, "--batch must be at least 1");
    let loaded = open(checkpoint, model, device)?;
    let all = examples(&dir.unwrap_or_else(data::data_dir))?;
    let evaluation = loaded.evaluation(&data::part(&all, Part::Test, None), batch)?;
    if json {
        let mut line = serde_json::to_value(&evaluation)?;
        line["seconds"] = started.elapsed().as_secs_f64().into();
        println!("{line}");
    } else {
        println!("{}", evaluation.words());
    }
    Ok(())
}

fn predict(
    checkpoint: &Path,
    texts: Vec<String>,
    file: Option<PathBuf>,
    json: bool,
    model: ModelArg,
    device: Device,
) -> Result<()> {
    let texts = match file {
        Some(path) => vec![data::read_message(&path)?],
        None => texts,
    };
    ensure!(!texts.is_empty(), "give a text to label, or --file FILE");
    let loaded = open(checkpoint, model, device)?;
    for (i, t) in texts.iter().enumerate() {
        let has_tokens = loaded.tokenizer.encode(t, false).map(|e| !e.is_empty()).unwrap_or(false);
        ensure!(has_tokens, "text {} has no tokens (empty or only spaces): give a message to label", i + 1);
    }
    for (text, prediction) in texts.iter().zip(loaded.predict(&texts)?) {
        match json {
            true => println!("{}", serde_json::to_string(&prediction)?),
            false => println!("{}", prediction.words(text)),
        }
    }
    Ok(())
}
