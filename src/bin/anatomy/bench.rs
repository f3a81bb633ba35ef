//! `anatomy bench`: how long the chapter's building blocks take on this machine.
//!
//! Every case is run a few times to warm up, then `--repeats` times; the median is reported. Run it in
//! release mode (`make bench`), and compare against the chapter's PyTorch code with
//! `--compare FILE`, where FILE is what `scripts/bench_pytorch.py` printed on the same machine.
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use tch::nn::{self, ModuleT};
use tch::{Device, Kind, Tensor};
use transformer_anatomy::{BertConfig, EncoderOptions, FusedMultiHeadAttention, MultiHeadAttention, TransformerEncoder};

#[derive(clap::Args)]
pub struct Args {
    /// Print {"results": [{"name", "batch", "seq", "median_s"}, ...]} instead of a table.
    #[arg(long)]
    json: bool,
    /// Timed runs per case; the median is reported.
    #[arg(long, default_value_t = 10)]
    repeats: usize,
    /// Only batch 1 and sequence length 5, to check that the benchmark runs.
    #[arg(long)]
    quick: bool,
    /// A JSON file of the same cases timed with PyTorch (scripts/bench_pytorch.py): adds a ratio column.
    #[arg(long, value_name = "FILE")]
    compare: Option<PathBuf>,
}

#[derive(Serialize, Deserialize, Clone)]
struct Timing {
    name: String,
    batch: i64,
    seq: i64,
    median_s: f64,
}

#[derive(Serialize, Deserialize)]
struct Report {
    results: Vec<Timing>,
}

fn median_seconds(repeats: usize, mut f: impl FnMut() -> Tensor) -> f64 {
    for _ in 0..2 {
        let _ = f();
    }
    let mut times: Vec<f64> = (0..repeats.max(1))
        .map(|_| {
            let start = Instant::now();
            let out = f();
            let _ = out.size(); // the result exists; on CUDA, synchronise below
            if let Device::Cuda(_) = out.device() {
                tch::Cuda::synchronize(0);
            }
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

pub fn run(args: Args, device: Device) -> Result<()> {
    tch::manual_seed(0);
    let _guard = tch::no_grad_guard();
    let config = BertConfig::bert_base_uncased();
    let vs = nn::VarStore::new(device);
    let per_head = MultiHeadAttention::new(vs.root() / "per_head", &config);
    let fused = FusedMultiHeadAttention::new(vs.root() / "fused", &config);
    let mut results = Vec::new();
    let (batches, seqs): (&[i64], &[i64]) = if args.quick { (&[1], &[5]) } else { (&[1, 8], &[5, 128, 512]) };
    for &batch in batches {
        for &seq in seqs {
            let x = Tensor::randn([batch, seq, config.hidden_size], (Kind::Float, device));
            let cases: [(&str, Box<dyn Fn() -> Tensor>); 3] = [
                ("mha_per_head", Box::new(|| per_head.forward(&x, None, false))),
                ("mha_fused", Box::new(|| fused.forward(&x, None, false))),
                ("mha_libtorch_sdpa", Box::new(|| fused.forward_libtorch(&x, None))),
            ];
            for (name, f) in cases {
                results.push(Timing { name: name.into(), batch, seq, median_s: median_seconds(args.repeats, f) });
            }
        }
    }
    let seq = if args.quick { 5 } else { 128 };
    let ids = Tensor::randint(config.vocab_size, [1, seq], (Kind::Int64, device));
    for (name, options) in [("encoder_bert_base_book", EncoderOptions::book()), ("encoder_bert_base_bert", EncoderOptions::bert())] {
        let encoder = TransformerEncoder::new(vs.root() / name, &config, options)?;
        let median_s = median_seconds(args.repeats, || encoder.forward_t(&ids, false));
        results.push(Timing { name: name.into(), batch: 1, seq, median_s });
    }

    let reference: HashMap<(String, i64, i64), f64> = match &args.compare {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let report: Report = serde_json::from_str(&text).with_context(|| format!("{} is not a bench report", path.display()))?;
            report.results.into_iter().map(|t| ((t.name, t.batch, t.seq), t.median_s)).collect()
        }
        None => HashMap::new(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&Report { results })?);
        return Ok(());
    }
    let mode = if cfg!(debug_assertions) { "debug build: numbers are not meaningful, use `make bench`" } else { "release build" };
    println!("{} threads, {device:?}, {mode}", tch::get_num_threads());
    println!("{:<26} {:>5} {:>5} {:>12} {:>12} {:>8}", "case", "batch", "seq", "median ms", "PyTorch ms", "ratio");
    for t in &results {
        let theirs = reference.get(&(t.name.clone(), t.batch, t.seq));
        let (their_ms, ratio) = match theirs {
            Some(&s) => (format!("{:.3}", s * 1e3), format!("{:.2}", t.median_s / s)),
            None => ("-".into(), "-".into()),
        };
        println!("{:<26} {:>5} {:>5} {:>12.3} {:>12} {:>8}", t.name, t.batch, t.seq, t.median_s * 1e3, their_ms, ratio);
    }
    if !reference.is_empty() {
        println!("ratio = ours / PyTorch's: below 1 means the Rust version is faster");
    }
    Ok(())
}
