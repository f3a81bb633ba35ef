//! `anatomy classify`: chapter 12's spam filter. `prepare` turns the corpus set-up fetched into the
//! labelled examples and their one split (`.deps/spam-assassin/examples.jsonl`); `train` trains the
//! chapter's head on the frozen body's pooled features and reports the test metrics.
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, ensure, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tch::Device;
use transformer_anatomy::classify::checkpoint::{head_config, Loaded, Trained};
use transformer_anatomy::classify::data::{self, Example, Part, LABELS};
use transformer_anatomy::classify::features::{self, Cache};
use transformer_anatomy::classify::frozen::{metrics, train_head, HeadOptions};
use transformer_anatomy::classify::{tokens_that_mattered, Pooling};
use transformer_anatomy::model_dir::resolve_model_dir;
use transformer_anatomy::training::checkpoint::check_output_path;

use transformer_anatomy::{BertModel, Tokenizer};

use transformer_anatomy::classify::fine_tune::{self, evaluate, fine_tune, FineTuneOptions};

use crate::progress::TrainingBar;
use crate::ModelArg;

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
    Train(TrainArgs),
    /// Evaluate what `train --out` wrote (a head, or a fine-tuned model) on the test set.
    Eval {
        checkpoint: PathBuf,
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        #[arg(long, default_value_t = 32)]
        batch: usize,
        /// One JSON object: `{"test": {"accuracy", "precision", "recall", "f1", "hard_ham_accuracy",
        /// "confusion"}, "seconds"}`.
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
        /// One JSON object per text: `{"label", "probability", "tokens": [{"token", "weight"}, ...]}`.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        model: ModelArg,
    },
}

#[derive(clap::Args)]
struct TrainArgs {
    /// Which vector stands for a message: the first token's ([CLS]) or the mean of all real tokens.
    #[arg(long, value_enum, default_value_t = PoolingArg::Mean)]
    pooling: PoolingArg,
    /// Tokens read per message (its opening), [CLS] and [SEP] included: 2 to 512.
    #[arg(long, default_value_t = 128)]
    max_len: usize,
    /// Passes over the training part [default: 40 for the head on the frozen body, 1 with --fine-tune].
    #[arg(long)]
    epochs: Option<usize>,
    /// The peak learning rate [default: 1e-3 for the head on the frozen body, 5e-5 with --fine-tune].
    #[arg(long)]
    lr: Option<f64>,
    /// Messages per batch, for the body's pass and for the head's training.
    #[arg(long, default_value_t = 32)]
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
    #[arg(long, default_value_t = 0)]
    seed: i64,
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

#[derive(Clone, Copy, clap::ValueEnum)]
enum PoolingArg {
    Cls,
    Mean,
}

impl PoolingArg {
    fn pooling(self) -> Pooling {
        match self {
            PoolingArg::Cls => Pooling::Cls,
            PoolingArg::Mean => Pooling::Mean,
        }
    }
}

/// The corpus in `dir` made into examples and written to `dir/examples.jsonl` (`prepare`).
fn prepare(dir: &Path) -> Result<(Vec<Example>, data::Counts, PathBuf)> {
    let (examples, counts) = data::prepare(&data::read_raw(&dir.join("raw.jsonl"))?)?;
    let out = dir.join("examples.jsonl");
    data::write_examples(&out, &examples)?;
    Ok((examples, counts, out))
}

/// The examples, prepared first if only the corpus is there; "run `make setup`" if neither is.
fn examples(dir: &Path) -> Result<Vec<Example>> {
    let path = dir.join("examples.jsonl");
    if !path.exists() {
        if !dir.join("raw.jsonl").exists() {
            bail!("the spam corpus is missing in {}: run `make setup`", dir.display());
        }
        eprintln!("preparing the examples first (anatomy classify prepare) ...");
        return Ok(prepare(dir)?.0);
    }
    data::read_examples(&path)
}

fn train(args: TrainArgs, device: Device) -> Result<()> {
    let started = Instant::now();
    features::check_max_len(args.max_len)?;
    ensure!(args.batch > 0, "--batch must be at least 1");
    ensure!(args.epochs() > 0, "--epochs must be at least 1");
    ensure!(args.limit != Some(0), "--limit must be at least 1");
    if let Some(out) = &args.out {
        check_output_path(out)?;
    }
    let model_dir = resolve_model_dir(args.model.model.clone())?;
    let (tokenizer, model) = ModelArg { model: args.model.model.clone() }.pretrained(device)?;
    if let Some(k) = args.top_layers {
        fine_tune::check_top_layers(&model, k)?; // before the corpus is read
    }
    let dir = args.dir.clone().unwrap_or_else(data::data_dir);
    let all = examples(&dir)?;
    let parts = [Part::Train, Part::Validation, Part::Test].map(|p| data::part(&all, p, args.limit));
    if args.fine_tune {
        return fine_tune_run(&args, &parts, &tokenizer, model, &model_dir, started);
    }
    // One pass of the body over every message used, kept on disk under what it was made from.
    let used: Vec<&Example> = parts.iter().flatten().copied().collect();
    let feature_start = Instant::now();
    let bar = ProgressBar::with_draw_target(
        Some(used.len() as u64),
        if args.json { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() },
    );
    bar.set_style(
        ProgressStyle::with_template("the body reads the messages {bar:30} {pos}/{len}  {per_sec}  eta {eta}")
            .expect("a template")
            .progress_chars("█▉ "),
    );
    let (features, cached) = features::cached(
        &model,
        &tokenizer,
        &used,
        (args.max_len, args.batch),
        Cache { dir: &dir, model_dir: &model_dir },
        &mut |done, _| bar.set_position(done as u64),
    )?;
    bar.finish_and_clear();
    let feature_seconds = feature_start.elapsed().as_secs_f64();
    let pooling = args.pooling.pooling();
    let x = features.get(pooling);
    let (n_train, n_val) = (parts[0].len() as i64, parts[1].len() as i64);
    let slice = |from: i64, n: i64| x.narrow(0, from, n);
    let labels = |p: &[&Example]| p.iter().map(|e| e.label).collect::<Vec<_>>();
    let options = HeadOptions {
        epochs: args.epochs(),
        lr: args.lr(),
        batch: args.batch,
        seed: args.seed,
        ..HeadOptions::default()
    };
    let head_start = Instant::now();
    let head =
        train_head((&slice(0, n_train), &labels(&parts[0])), (&slice(n_train, n_val), &labels(&parts[1])), options)?;
    let head_seconds = head_start.elapsed().as_secs_f64();
    if let Some(out) = &args.out {
        head.save(out, &head_config(pooling, args.max_len, &model_dir, &model))?;
    }
    let validation = metrics(&head.predict(&slice(n_train, n_val)), &parts[1]);
    let test = metrics(&head.predict(&slice(n_train + n_val, parts[2].len() as i64)), &parts[2]);
    let report = serde_json::json!({
        "regime": "frozen",
        "pooling": pooling,
        "max_len": args.max_len,
        "train": parts[0].len(),
        "validation": validation,
        "test": test,
        "curve": head.curve,
        "features_cached": cached,
        "feature_seconds": feature_seconds,
        "messages_per_s": if cached { serde_json::Value::Null } else { (used.len() as f64 / feature_seconds).into() },
        "head_seconds": head_seconds,
        "seconds": started.elapsed().as_secs_f64(),
    });
    if args.json {
        println!("{report}");
    } else {
        let how = if cached {
            "read from the cache".to_string()
        } else {
            format!("{:.0} messages/s", used.len() as f64 / feature_seconds)
        };
        println!(
            "body: {} messages read in {feature_seconds:.1} s ({how}); head: {} epochs in {head_seconds:.1} s",
            used.len(),
            args.epochs()
        );
        println!("pooling {:?}, {} tokens: test accuracy {:.3}, precision {:.3}, recall {:.3}, F1 (spam) {:.3}; hard ham {:.3}",
            pooling, args.max_len, test.accuracy, test.precision, test.recall, test.f1, test.hard_ham_accuracy);
        let [[tn, fp], [fn_, tp]] = test.confusion;
        println!("confusion (rows: true ham, spam; columns: predicted ham, spam): [{tn} {fp}] [{fn_} {tp}]");
    }
    Ok(())
}

pub fn run(args: Args, device: impl FnOnce() -> Result<Device>) -> Result<()> {
    match args.command {
        Command::Train(a) => train(a, device()?),
        Command::Eval { checkpoint, dir, batch, json, model } => eval(&checkpoint, dir, batch, json, model, device()?),
        Command::Predict { checkpoint, texts, file, json, model } => {
            predict(&checkpoint, texts, file, json, model, device()?)
        }
        Command::Prepare { dir, json } => {
            let (examples, counts, out) = prepare(&dir.unwrap_or_else(data::data_dir))?;
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
    let test = data::part(&all, Part::Test, None);
    let texts: Vec<String> = test.iter().map(|e| e.text()).collect();
    let predicted = Vec::<i64>::try_from(&loaded.probabilities(&texts, batch)?.argmax(-1, false))?;
    let m = metrics(&predicted.iter().map(|&l| l as usize).collect::<Vec<_>>(), &test);
    let regime = match loaded.trained {
        Trained::Frozen(_) => "frozen",
        Trained::FineTuned(_) => "fine-tune",
    };
    if json {
        println!(
            "{}",
            serde_json::json!({"regime": regime, "test": m, "pooling": loaded.config.pooling, "max_len": loaded.config.max_len, "seconds": started.elapsed().as_secs_f64()})
        );
    } else {
        println!(
            "test ({regime}): accuracy {:.3}, precision {:.3}, recall {:.3}, F1 (spam) {:.3}; hard ham {:.3}",
            m.accuracy, m.precision, m.recall, m.f1, m.hard_ham_accuracy
        );
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
        Some(path) => {
            let bytes = std::fs::read(&path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text: save it as UTF-8", path.display()))?;
            ensure!(!text.trim().is_empty(), "{} is empty: give a message to label", path.display());
            vec![text]
        }
        None => texts,
    };
    ensure!(!texts.is_empty(), "give a text to label, or --file FILE");
    let loaded = open(checkpoint, model, device)?;
    for (i, t) in texts.iter().enumerate() {
        let has_tokens = loaded.tokenizer.encode(t, false).map(|e| !e.is_empty()).unwrap_or(false);
        ensure!(has_tokens, "text {} has no tokens (empty or only spaces): give a message to label", i + 1);
    }
    let probabilities = loaded.probabilities(&texts, 32)?;
    let direction = loaded.direction();
    for (i, text) in texts.iter().enumerate() {
        let p = Vec::<f32>::try_from(&probabilities.get(i as i64).to_device(Device::Cpu))?;
        let label = if p[1] > p[0] { 1 } else { 0 };
        let config = &loaded.config;
        let mut tokens = tokens_that_mattered(
            &loaded.body,
            &loaded.tokenizer,
            text,
            config.max_len,
            config.pooling,
            &direction,
            label,
        )?;
        tokens.truncate(5);
        if json {
            let tokens: Vec<_> = tokens.iter().map(|(t, w)| serde_json::json!({"token": t, "weight": w})).collect();
            println!(
                "{}",
                serde_json::json!({"label": config.labels[label], "probability": p[label], "tokens": tokens})
            );
        } else {
            let shown: String = text.chars().take(60).collect();
            let listed: Vec<String> = tokens.iter().map(|(t, w)| format!("{t} {w:+.3}")).collect();
            println!("{} ({:.3})  {}", config.labels[label], p[label], shown.replace('\n', " "));
            let why = match config.pooling {
                Pooling::Mean => "share of the decision",
                Pooling::Cls => "[CLS]'s attention, last layer",
            };
            println!("  tokens that mattered most ({why}): {}", listed.join(", "));
        }
    }
    Ok(())
}

fn fine_tune_run(
    args: &TrainArgs,
    parts: &[Vec<&Example>; 3],
    tokenizer: &Tokenizer,
    mut model: BertModel,
    model_dir: &Path,
    started: Instant,
) -> Result<()> {
    let options = FineTuneOptions {
        pooling: args.pooling.pooling(),
        max_len: args.max_len,
        epochs: args.epochs(),
        max_steps: args.steps,
        batch: args.batch,
        lr: args.lr(),
        eval_every: args.eval_every,
        top_layers: args.top_layers,
        seed: args.seed,
        ..FineTuneOptions::default()
    };
    let per_epoch = parts[0].len().div_ceil(args.batch);
    let total = args.steps.map_or(per_epoch * args.epochs(), |m| m.min(per_epoch * args.epochs()));
    let mut bar = TrainingBar::new(total as u64, !args.json);
    let tuned = fine_tune(&mut model, tokenizer, &parts[0], &parts[1], options, &mut |s| {
        bar.show(s.step as u64, s.steps as u64, s.loss, s.lr, &format!("{:.1} messages/s", s.messages_per_s))
    })?;
    let (test_loss, test) = evaluate(&model, &tuned.classifier, tokenizer, &parts[2], &options)?;
    if let Some(out) = &args.out {
        fine_tune::save(&model, &head_config(options.pooling, options.max_len, model_dir, &model), out)?;
    }
    let report = serde_json::json!({
        "regime": "fine-tune",
        "pooling": options.pooling,
        "max_len": options.max_len,
        "train": parts[0].len(),
        "options": options,
        "evaluations": tuned.evaluations,
        "best_step": tuned.best_step,
        "steps": tuned.steps,
        "test": test,
        "test_loss": test_loss,
        "seconds": started.elapsed().as_secs_f64(),
    });
    if args.json {
        println!("{report}");
    } else {
        println!(
            "fine-tuned {} steps in {:.0} s (weights of step {} kept); test accuracy {:.3}, precision {:.3}, recall {:.3}, F1 (spam) {:.3}; hard ham {:.3}",
            tuned.steps.len(), started.elapsed().as_secs_f64(), tuned.best_step, test.accuracy, test.precision, test.recall, test.f1, test.hard_ham_accuracy
        );
    }
    Ok(())
}
