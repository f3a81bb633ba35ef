//! `anatomy gpt train` and `anatomy gpt sample`: chapter 11's character-level GPT.
use std::path::PathBuf;

use anyhow::Result;
use tch::Device;
use transformer_anatomy::gpt::train::default_text;
use transformer_anatomy::gpt::{load_gpt, sample, save_gpt, train_gpt, GptTrainOptions, SampleOptions};
use transformer_anatomy::training::checkpoint::check_output_path;

use crate::progress::TrainingBar;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Train a character-level GPT on a text (Moby-Dick by default) and report the held-out loss.
    Train(TrainArgs),
    /// Continue a prompt with a trained GPT: greedy, or sampled with temperature, top-k or top-p.
    Sample(SampleArgs),
}

#[derive(clap::Args)]
struct TrainArgs {
    /// A UTF-8 text to learn [default: Moby-Dick, .deps/text/moby-dick.txt, fetched by `make setup`].
    #[arg(long, value_name = "FILE")]
    text: Option<PathBuf>,
    #[arg(long, default_value_t = 2000)]
    steps: u64,
    #[arg(long, default_value_t = 4)]
    layers: i64,
    /// Attention heads (must divide --d-model).
    #[arg(long, default_value_t = 4)]
    heads: i64,
    #[arg(long, default_value_t = 128)]
    d_model: i64,
    /// Characters the model sees at once.
    #[arg(long, default_value_t = 64)]
    context: i64,
    /// Blocks of text per step.
    #[arg(long, default_value_t = 12)]
    batch: i64,
    /// The peak learning rate (reached after --warmup steps; a cosine takes it to a tenth by the end).
    #[arg(long, default_value_t = 1e-3)]
    lr: f64,
    #[arg(long, default_value_t = 100)]
    warmup: u64,
    #[arg(long, default_value_t = 1337)]
    seed: i64,
    /// Write the trained model here (safetensors, with its vocabulary and sizes).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print {"seconds", "steps": [{"step", "loss", "lr"}, ...], "eval": {"val_loss"}}.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct SampleArgs {
    /// A checkpoint written by `anatomy gpt train -o FILE`.
    #[arg(long, value_name = "FILE")]
    checkpoint: PathBuf,
    #[arg(long, default_value = "\n")]
    prompt: String,
    #[arg(long, default_value_t = 256)]
    max_new_tokens: usize,
    /// 0 = greedy.
    #[arg(long, default_value_t = 0.8)]
    temperature: f64,
    #[arg(long)]
    top_k: Option<i64>,
    #[arg(long)]
    top_p: Option<f64>,
    #[arg(long, default_value_t = 1337)]
    seed: i64,
    /// Recompute the whole window at every step instead of keeping keys and values (same text, slower).
    #[arg(long)]
    no_cache: bool,
    /// Print {"prompt", "text", "log_prob"}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, device: Device) -> Result<()> {
    match args.command {
        Command::Train(args) => train(args, device),
        Command::Sample(args) => sample_text(args, device),
    }
}

fn train(args: TrainArgs, device: Device) -> Result<()> {
    if let Some(path) = &args.output {
        check_output_path(path)?; // before the work, not after it
    }
    let options = GptTrainOptions {
        text: args.text,
        steps: args.steps,
        layers: args.layers,
        heads: args.heads,
        d_model: args.d_model,
        context: args.context,
        batch: args.batch,
        lr: args.lr,
        warmup: args.warmup,
        seed: args.seed,
        device,
        ..GptTrainOptions::default()
    };
    let mut bar = TrainingBar::new(options.steps, !args.json);
    let (trained, _, report) = train_gpt(&options, &mut |p| {
        bar.show(p.step, p.steps, p.loss, p.lr, &format!("{:.0} chars/s", p.chars_per_s))
    })?;
    if let Some(path) = &args.output {
        save_gpt(&trained, path)?;
    }
    if args.json {
        println!("{}", report.json());
        return Ok(());
    }
    println!("{}", report.words(&options.text.clone().unwrap_or_else(default_text)));
    if let Some(path) = &args.output {
        println!("wrote {}", path.display());
    }
    Ok(())
}

fn sample_text(args: SampleArgs, device: Device) -> Result<()> {
    let trained = load_gpt(&args.checkpoint, device)?;
    let options = SampleOptions {
        max_new_tokens: args.max_new_tokens,
        temperature: args.temperature,
        top_k: args.top_k,
        top_p: args.top_p,
        seed: args.seed,
        use_cache: !args.no_cache,
    };
    let sampled = sample(&trained, &args.prompt, &options)?;
    if args.json {
        println!("{}", serde_json::to_string(&sampled)?);
    } else {
        println!("{}{}", sampled.prompt, sampled.text);
    }
    Ok(())
}
