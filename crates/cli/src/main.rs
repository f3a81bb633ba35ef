//! `anatomy`: the command-line companion to the chapter. `anatomy --help` lists the sub-commands.
// Doc comments here are `--help` text for clap, not rustdoc: "[CLS]" is a token, not a link.
#![allow(rustdoc::broken_intra_doc_links)]
// First: its `println!` and `print!` replace the standard ones in every module below.
#[macro_use]
mod output;

mod attention;
mod autograder;
mod bench;
mod check_gpu;
mod classify;
mod doctor;
mod encode;
mod exercises;
mod gpt;
mod gradebook;
mod new_exercise;
mod notebooks;
mod progress;
mod tokenize;
mod tour;
mod train;
mod translate;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::{Parser, Subcommand};
use tch::Device;
use transformer_anatomy::model_dir::resolve_model_dir;
use transformer_anatomy::{AttentionKind, BertModel, Tokenizer};

#[derive(Parser)]
#[command(
    name = "anatomy",
    version,
    about = "Chapter 3 of NLP with Transformers, the Transformer's anatomy, step by step in Rust"
)]
struct Cli {
    /// Where tensors live: `auto` picks CUDA when a GPU is available, else the CPU.
    #[arg(long, global = true, value_enum, default_value_t = DeviceArg::Auto)]
    device: DeviceArg,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Walk through the chapter's steps on a text: each step's operation, output shape and values.
    Tour(tour::Args),
    /// Show the token ids, token type ids and tokens of a text or a text pair.
    Tokenize(tokenize::Args),
    /// Check the installation: LibTorch, CUDA and the model folder, and what to do about anything missing.
    Doctor(doctor::Args),
    /// Run the pretrained model on a text: last hidden state and sentence embedding.
    Encode(encode::Args),
    /// Draw what the pretrained model's heads attend to (head, model or neuron view), or print it as JSON.
    Attention(attention::Args),
    /// Generate the notebooks from the chapters (chapters/*.md → notebooks/*.ipynb).
    Notebooks(notebooks::Args),
    /// The exercises: list, check, watch, reset, solution, and grading a class.
    Exercises(exercises::Args),
    /// Time per-head and fused multi-head attention, libtorch's attention and a BERT-base encoder.
    Bench(bench::Args),
    /// On a GPU: the chapter's code against the same code on the CPU, and against PyTorch (make test-gpu).
    CheckGpu(check_gpu::Args),
    /// Train an encoder-decoder on a generated task (copy, reverse, dates) and save it.
    Train(train::Args),
    /// Translate a text with a trained checkpoint: greedy or beam search, with or without the cache.
    Translate(translate::Args),
    /// Chapter 11: train a character-level GPT on a book, and sample from it.
    Gpt(gpt::Args),
    /// Chapter 12: the spam filter: its data (prepare) and the head on the frozen body (train).
    Classify(classify::Args),
}

/// The model folder option shared by every command that reads the tokenizer or a config.
#[derive(clap::Args)]
pub struct ModelArg {
    /// The model folder (config.json, tokenizer.json); else $ANATOMY_MODEL_DIR, else the one set-up made.
    #[arg(long, value_name = "DIR")]
    pub model: Option<PathBuf>,
}

impl ModelArg {
    /// The tokenizer and the pretrained model of the chosen folder.
    pub fn pretrained(self, device: Device) -> Result<(Tokenizer, BertModel)> {
        let dir = resolve_model_dir(self.model)?;
        Ok((Tokenizer::from_model_dir(&dir)?, BertModel::from_pretrained(&dir, AttentionKind::Fused, device)?))
    }
}

/// The values of `--device`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum DeviceArg {
    Auto,
    Cpu,
    Cuda,
}

impl DeviceArg {
    fn device(self) -> Result<Device> {
        Ok(match self {
            DeviceArg::Cpu => Device::Cpu,
            DeviceArg::Cuda if tch::Cuda::is_available() => Device::Cuda(0),
            DeviceArg::Cuda => bail!("--device cuda, but LibTorch sees no CUDA device: build with `make setup CUDA=1` on a GPU machine, or use --device cpu"),
            DeviceArg::Auto => Device::cuda_if_available(),
        })
    }
}

/// What a sub-command ended with: done, or a report that said "not yet" (exit code 1, nothing more to print).
enum Ending {
    Done,
    NotYet,
}

fn run(cli: Cli) -> Result<Ending> {
    // Resolved only by the commands that run a model: `--device cuda exercises list` on a machine without
    // a GPU lists the exercises instead of failing over a device it never uses.
    let device = || cli.device.device();
    match cli.command {
        Command::Tour(args) => tour::run(args, device()?)?,
        Command::Tokenize(args) => tokenize::run(args)?,
        Command::Doctor(args) => doctor::run(args)?,
        Command::Bench(args) => bench::run(args, device()?)?,
        // The GPU, whatever --device says: the check compares it with the CPU.
        Command::CheckGpu(args) => check_gpu::run(args, Device::Cuda(0))?,
        Command::Encode(args) => encode::run(args, device()?)?,
        Command::Notebooks(args) => notebooks::run(args)?,
        Command::Classify(args) => classify::run(args, device)?,
        Command::Attention(args) => attention::run(args, device()?)?,
        Command::Train(args) => train::run(args, device()?)?,
        Command::Translate(args) => translate::run(args, device()?)?,
        Command::Gpt(args) => gpt::run(args, device()?)?,
        // The report said what is missing; the exit code says "not yet" to scripts.
        Command::Exercises(args) => return Ok(if exercises::run(args)? { Ending::Done } else { Ending::NotYet }),
    }
    Ok(Ending::Done)
}

/// Parses the command line. `--help` and `--version` print as clap prints them; a mistake (an unknown
/// value, a missing argument) becomes one line, `error: …` with the accepted values, and exit code 1,
/// like every other error of this program.
fn parse() -> Result<Cli, ExitCode> {
    Cli::try_parse().map_err(|e| {
        if !e.use_stderr() {
            let _ = e.print(); // help or version
            return ExitCode::SUCCESS;
        }
        let rendered = e.render().to_string();
        let line: Vec<&str> = rendered
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
            .collect();
        eprintln!("{} (see --help)", line.join(" "));
        ExitCode::FAILURE
    })
}

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match run(cli) {
        Ok(Ending::Done) => ExitCode::SUCCESS,
        Ok(Ending::NotYet) => ExitCode::FAILURE,
        // The reader of our output went away (`| head`): a command-line tool ends there, quietly.
        Err(e) if output::is_closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // One line, the whole chain of context: "what failed: why".
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
