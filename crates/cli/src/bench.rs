//! `anatomy bench`: how long the chapter's building blocks take on this machine, and — with
//! `--pytorch PYTHON` — how that compares with the same blocks written in PyTorch, timed in interleaved
//! rounds. The timing rules and the cases are `anatomy_tools::bench`; this file prints them. Build
//! in release mode (`make bench`).
use std::path::PathBuf;

use anatomy_tools::bench::{self, BenchOptions, BenchReport};
use anyhow::Result;
use tch::Device;

#[derive(clap::Args)]
pub struct Args {
    /// Print {"results": [{"name", "batch", "seq", "median_s", "host_s"}, ...], "cache_ratios": [{"name",
    /// "pairs", "ratio"}, ...]} instead of a table (with --pytorch, results also carry "pytorch_median_s",
    /// "pytorch_host_s" and "ratio", and the decoding jobs' cache_ratios "pytorch_ratio"). "host_s" is the
    /// time until the call returned, before waiting for a GPU's work: the host's own part.
    #[arg(long)]
    json: bool,
    /// Timed runs per case and round; the median is reported.
    #[arg(long, default_value_t = 10)]
    repeats: usize,
    /// Rounds per case when comparing with PyTorch (ours, theirs, ours, theirs, ...). The cached and
    /// recomputing variants of decoding alternate run by run, rounds × repeats pairs (at least 3); with
    /// PyTorch, each round runs `repeats` pairs of ours, then as many of PyTorch's.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Only batch 1 and sequence length 5, to check that the benchmark runs.
    #[arg(long)]
    quick: bool,
    /// Only the cases whose name contains this text (e.g. `train_step_gpt`, `decode`, `mha_fused`), or one
    /// of several texts separated by commas (`mha,encoder`).
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,
    /// A Python with torch 2.13 (`scripts/reference-venv.sh` makes one): time the same cases in PyTorch,
    /// on the same device, interleaved with ours, and print the ratio.
    #[arg(long, value_name = "PYTHON")]
    pytorch: Option<PathBuf>,
}

pub fn run(args: Args, device: Device) -> Result<()> {
    let options = BenchOptions {
        repeats: args.repeats,
        rounds: args.rounds,
        quick: args.quick,
        only: args.only,
        pytorch: args.pytorch,
    };
    let BenchReport { results, cache_ratios } = bench::run(&options, device)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&BenchReport { results, cache_ratios })?);
        return Ok(());
    }
    let mode = if cfg!(debug_assertions) {
        "debug build: numbers are not meaningful, use `make bench`"
    } else {
        "release build"
    };
    println!("{} threads, {device:?}, {mode}", tch::get_num_threads());
    print!(
        "{}",
        BenchReport { results, cache_ratios }.table(device, options.pytorch.is_some().then_some(args.rounds.max(1)))
    );
    Ok(())
}
