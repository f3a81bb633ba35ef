//! `anatomy bench`: how long the chapter's building blocks take on this machine, and — with
//! `--pytorch PYTHON` — how that compares with the same blocks written in PyTorch.
//!
//! Every case is warmed up, then run `--repeats` times; the median is reported. A shared machine's speed
//! drifts by tens of percent from one minute to the next, so a comparison must not time one side and
//! then the other: with `--pytorch`, a PyTorch process (`scripts/bench_pytorch.py --serve`) times each
//! case right after we do, and this alternates for `--rounds` rounds; each side reports the median of
//! its rounds, and the ratio is the median of the rounds' own ratios (each round's two halves saw about
//! the same machine). Both sides run the same LibTorch (2.13.0) on the same threads, without autograd. Build in
//! release mode (`make bench`).
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;

use tch::nn::{self, ModuleT, OptimizerConfig};
use tch::{Device, Kind, Tensor};
use transformer_anatomy::decoding::StepDecoder;
use transformer_anatomy::training::data::{Batch, Task, BOS};
use transformer_anatomy::training::{label_smoothed_loss, TrainOptions, TrainedModel};
use transformer_anatomy::{
    Attention, BertConfig, EncoderOptions, FusedMultiHeadAttention, MultiHeadAttention, Pass, Seq2SeqConfig,
    TransformerEncoder,
};

#[derive(clap::Args)]
pub struct Args {
    /// Print {"results": [{"name", "batch", "seq", "median_s"}, ...], "cache_ratios": [{"name", "pairs",
    /// "ratio"}, ...]} instead of a table (with --pytorch, results also carry "pytorch_median_s" and
    /// "ratio", and the decoding jobs' cache_ratios "pytorch_ratio").
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
    /// Only the cases whose name contains this text (e.g. `train_step_gpt`, `decode`, `mha_fused`).
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,
    /// A Python with torch 2.13 (`scripts/reference-venv.sh` makes one): time the same cases in PyTorch,
    /// interleaved with ours, and print the ratio.
    #[arg(long, value_name = "PYTHON")]
    pytorch: Option<PathBuf>,
}

/// How long one side of an interleaved comparison waits before the other side runs.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(300);

#[derive(Serialize)]
struct Timing {
    name: String,
    batch: i64,
    seq: i64,
    median_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pytorch_median_s: Option<f64>,
    /// Ours / PyTorch's: the median over the rounds of each round's ratio.
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio: Option<f64>,
}

#[derive(Serialize)]
struct Report {
    results: Vec<Timing>,
    cache_ratios: Vec<CacheRatio>,
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Ours / PyTorch's for a case timed in rounds: the median of the rounds' own ratios.
fn ratio_of_rounds(ours: &[f64], theirs: &[f64]) -> f64 {
    median(ours.iter().zip(theirs).map(|(o, t)| o / t).collect())
}

/// Our own two variants of one job, with and without the key/value cache: `{prefix}_cached_{suffix}` and
/// `{prefix}_recompute_{suffix}`, and the cache's speed-up. The variants alternate run by run, and the
/// speed-up is the median of each pair's ratio: the machine's speed drifts by tens of percent from one
/// second to the next, and a pair run back to back sees the same speed, where two blocks of runs need not.
///
/// With a PyTorch peer that has the same job (named `{prefix}_{suffix}`), each of `rounds` rounds runs
/// `pairs` of ours and then `pairs` of PyTorch's: each variant's ratio to PyTorch is the median of the
/// rounds' ratios, as for the other cases, and PyTorch's own cache speed-up is reported beside ours.
/// Without one, `rounds × pairs` pairs of ours run in one go.
fn cached_and_recomputed(
    (prefix, suffix): (&str, &str),
    what: String,
    seq: i64,
    (rounds, pairs): (usize, usize),
    mut pytorch: Option<&mut PyTorch>,
    run: &dyn Fn(bool) -> Tensor,
) -> Result<([Timing; 2], CacheRatio)> {
    let name = format!("{prefix}_{suffix}");
    let (rounds, pairs) = if pytorch.is_some() { (rounds.max(1), pairs.max(3)) } else { (1, (rounds * pairs).max(3)) };
    for _ in 0..2 {
        let _ = (run(true), run(false));
    }
    // Per side: every pair's two times, and each round's pairs apart (for the ratio to PyTorch).
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        ours.push((0..pairs).map(|_| (seconds(&|| run(true)), seconds(&|| run(false)))).collect::<Vec<_>>());
        if let Some(py) = pytorch.as_deref_mut() {
            std::thread::sleep(SETTLE);
            theirs.push(py.pairs(&name, seq, pairs)?);
            std::thread::sleep(SETTLE);
        }
    }
    let (all_ours, all_theirs) = (ours.concat(), theirs.concat());
    let speed_up = |pairs: &[(f64, f64)]| median(pairs.iter().map(|(c, r)| r / c).collect());
    let timings = [("cached", 0), ("recompute", 1)].map(|(variant, i)| {
        let times = |pairs: &[(f64, f64)]| pairs.iter().map(|p| if i == 0 { p.0 } else { p.1 }).collect::<Vec<_>>();
        let round_medians = |rounds: &[Vec<(f64, f64)>]| rounds.iter().map(|r| median(times(r))).collect::<Vec<_>>();
        let against = (!theirs.is_empty())
            .then(|| (median(times(&all_theirs)), ratio_of_rounds(&round_medians(&ours), &round_medians(&theirs))));
        Timing {
            name: format!("{prefix}_{variant}_{suffix}"),
            batch: 1,
            seq,
            median_s: median(times(&all_ours)),
            pytorch_median_s: against.map(|a| a.0),
            ratio: against.map(|a| a.1),
        }
    });
    let pytorch_ratio = (!theirs.is_empty()).then(|| speed_up(&all_theirs));
    let ratio = CacheRatio { name, what, pairs: rounds * pairs, ratio: speed_up(&all_ours), pytorch_ratio };
    Ok((timings, ratio))
}

/// How much faster the cached variant of a job is: the median over `pairs` back-to-back pairs.
#[derive(Serialize)]
struct CacheRatio {
    name: String,
    /// The job in words, for the table's closing line.
    #[serde(skip)]
    what: String,
    pairs: usize,
    ratio: f64,
    /// The same for PyTorch's version of the job, over as many pairs, when it was compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pytorch_ratio: Option<f64>,
}

/// One timed run (on a GPU, until its work is done).
fn seconds(f: &dyn Fn() -> Tensor) -> f64 {
    let start = Instant::now();
    let out = f();
    if let Device::Cuda(i) = out.device() {
        tch::Cuda::synchronize(i as i64);
    }
    start.elapsed().as_secs_f64()
}

fn median_seconds(repeats: usize, f: &dyn Fn() -> Tensor) -> f64 {
    for _ in 0..2 {
        let _ = f();
    }
    median((0..repeats.max(1)).map(|_| seconds(f)).collect())
}

/// The PyTorch side: a process that times one case per request line.
struct PyTorch {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

#[derive(Deserialize)]
struct Reply {
    median_s: Option<f64>,
    /// A decoding job's pairs: the cached run's seconds and the recomputing run's, pair by pair.
    cached_s: Option<Vec<f64>>,
    recompute_s: Option<Vec<f64>>,
    error: Option<String>,
}

impl PyTorch {
    fn start(python: &PathBuf) -> Result<Self> {
        let script = concat!(env!("ANATOMY_PROJECT_ROOT"), "/scripts/bench_pytorch.py");
        let mut child = Command::new(python)
            .args([script, "--serve"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {} {script}", python.display()))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        Ok(PyTorch { child, stdin, stdout })
    }

    fn ask(&mut self, name: &str, request: serde_json::Value) -> Result<Reply> {
        writeln!(self.stdin, "{request}").context("the PyTorch benchmark process has stopped")?;
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        let reply: Reply =
            serde_json::from_str(&line).with_context(|| format!("the PyTorch side answered {line:?}"))?;
        match reply.error {
            Some(e) => bail!("the PyTorch side failed on {name}: {e}"),
            None => Ok(reply),
        }
    }

    /// The median of `repeats` runs of a case.
    fn time(&mut self, name: &str, batch: i64, seq: i64, repeats: usize) -> Result<f64> {
        let request = serde_json::json!({"name": name, "batch": batch, "seq": seq, "repeats": repeats});
        self.ask(name, request)?.median_s.with_context(|| format!("the PyTorch side sent no time for {name}"))
    }

    /// `pairs` runs of a decoding job of `steps` steps with the cache, each followed by one without:
    /// (cached seconds, recomputing seconds) pair by pair.
    fn pairs(&mut self, name: &str, steps: i64, pairs: usize) -> Result<Vec<(f64, f64)>> {
        let reply = self.ask(name, serde_json::json!({"name": name, "seq": steps, "pairs": pairs}))?;
        match (reply.cached_s, reply.recompute_s) {
            (Some(c), Some(r)) if c.len() == pairs && r.len() == pairs => Ok(c.into_iter().zip(r).collect()),
            _ => bail!("the PyTorch side sent no {pairs} pairs of times for {name}"),
        }
    }
}

impl Drop for PyTorch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn run(args: Args, device: Device) -> Result<()> {
    let mut pytorch = args.pytorch.as_ref().map(PyTorch::start).transpose()?;
    tch::manual_seed(0);
    let _guard = tch::no_grad_guard();
    let config = BertConfig::bert_base_uncased();
    let vs = nn::VarStore::new(device);
    let per_head = MultiHeadAttention::new(vs.root() / "per_head", &config);
    let fused = FusedMultiHeadAttention::new(vs.root() / "fused", &config);
    let encoders = [
        ("encoder_bert_base_book", TransformerEncoder::new(vs.root() / "book", &config, EncoderOptions::book())?),
        ("encoder_bert_base_bert", TransformerEncoder::new(vs.root() / "bert", &config, EncoderOptions::bert())?),
    ];

    let wanted = |name: &str| args.only.as_deref().is_none_or(|only| name.contains(only));
    let (mut results, mut cache_ratios) = (Vec::new(), Vec::new());
    let mut measure = |name: &str, batch: i64, seq: i64, f: &dyn Fn() -> Tensor| -> Result<()> {
        if !wanted(name) {
            return Ok(());
        }
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..if pytorch.is_some() { args.rounds.max(1) } else { 1 } {
            ours.push(median_seconds(args.repeats, f));
            if let Some(py) = pytorch.as_mut() {
                // Each side's worker threads keep spinning for a while after their last operation and
                // would take the cores from the other side: let them fall asleep before the other starts.
                std::thread::sleep(SETTLE);
                theirs.push(py.time(name, batch, seq, args.repeats)?);
                std::thread::sleep(SETTLE);
            }
        }
        let ratio = (!theirs.is_empty()).then(|| ratio_of_rounds(&ours, &theirs));
        let pytorch_median_s = (!theirs.is_empty()).then(|| median(theirs));
        results.push(Timing { name: name.into(), batch, seq, median_s: median(ours), pytorch_median_s, ratio });
        Ok(())
    };
    let (batches, seqs): (&[i64], &[i64]) = if args.quick { (&[1], &[5]) } else { (&[1, 8], &[5, 128, 512]) };
    for &batch in batches {
        for &seq in seqs {
            let x = Tensor::randn([batch, seq, config.hidden_size], (Kind::Float, device));
            measure("mha_per_head", batch, seq, &|| per_head.forward(&x, &x, None, Pass::EVAL).output)?;
            // Asking for the weights keeps the chapter's steps; without, evaluation runs libtorch's kernel.
            measure("mha_fused", batch, seq, &|| fused.forward(&x, &x, None, Pass::WEIGHTS).output)?;
            measure("mha_libtorch_sdpa", batch, seq, &|| fused.forward(&x, &x, None, Pass::EVAL).output)?;
        }
    }
    let seq = if args.quick { 5 } else { 128 };
    let ids = Tensor::randint(config.vocab_size, [1, seq], (Kind::Int64, device));
    for (name, encoder) in &encoders {
        measure(name, 1, seq, &|| encoder.forward_t(&ids, false))?;
    }

    // Chapter 10: one training step of the copy model (batch 64 of length 10) at d_model 64 and 128, against
    // PyTorch's nn.Transformer of the same sizes; and 64 decoding steps with and without the cache.
    let examples = Task::Copy.held_out(64, 5);
    let batch = Batch::new(&examples, &Task::Copy.vocab(), Task::Copy, device)?;
    let sizes: &[i64] = if args.quick { &[64] } else { &[64, 128] };
    for &d_model in sizes {
        let options = TrainOptions { d_model, device, ..TrainOptions::for_task(Task::Copy) };
        let trained = TrainedModel::new(Task::Copy, &options.model_config(), device)?;
        let optimizer = RefCell::new(
            nn::Adam { beta1: 0.9, beta2: 0.98, eps: 1e-9, wd: 0.0, amsgrad: false }.build(&trained.vs, 1e-3)?,
        );
        let train_step = || {
            tch::with_grad(|| {
                let log_probs = trained.model.forward(&batch.source, &batch.target_in, true);
                let loss =
                    label_smoothed_loss(&log_probs, &batch.target_out, 0.1, trained.model.config.pad_id).cross_entropy;
                let mut optimizer = optimizer.borrow_mut();
                optimizer.zero_grad();
                loss.backward();
                optimizer.step();
                loss
            })
        };
        measure(&format!("train_step_copy_d{d_model}"), 64, 10, &train_step)?;
    }
    // Chapter 12: MiniLM reading a batch of 32 messages of 128 tokens (the frozen body's feature pass,
    // inference mode), and one fine-tuning step on such a batch (training mode, the loss on the mean-pooled
    // state, backward, gradients clipped, fused AdamW), against Hugging Face's BertModel doing the same.
    if !args.quick && wanted("minilm") {
        if let Ok(dir) = transformer_anatomy::model_dir::resolve_model_dir(None) {
            use transformer_anatomy::classify::fine_tune::train_step;
            use transformer_anatomy::classify::Pooling;
            use transformer_anatomy::training::fused_adamw::FusedAdamW;
            use transformer_anatomy::{AttentionKind, BertModel};
            let body = BertModel::from_pretrained(&dir, AttentionKind::Fused, device)?;
            let ids = Tensor::randint(body.config.vocab_size, [32, 128], (Kind::Int64, device));
            let rows: Vec<Vec<i64>> = Vec::<Vec<i64>>::try_from(&ids.to_device(Device::Cpu))?;
            let rows: Vec<&[i64]> = rows.iter().map(Vec::as_slice).collect();
            measure("classify_features_minilm", 32, 128, &|| {
                let _inference = transformer_anatomy::inference_mode::inference_mode_guard();
                let _no_grad = tch::no_grad_guard();
                transformer_anatomy::classify::features::read_batch(&body, &rows, Pass::EVAL).expect("ids in range").0
            })?;
            let tuned = BertModel::from_pretrained(&dir, AttentionKind::Fused, device)?;
            let classifier =
                transformer_anatomy::init::linear(tuned.vs.root() / "classifier", tuned.config.hidden_size, 2);
            let optimizer =
                RefCell::new(FusedAdamW::new(&tuned.vs, nn::AdamW { wd: 0.01, ..Default::default() }, 5e-5)?);
            let labels: Vec<i64> = (0..32).map(|i| i % 2).collect();
            measure("train_step_classify_minilm", 32, 128, &|| {
                tch::with_grad(|| {
                    let loss = train_step(
                        &tuned,
                        &classifier,
                        &mut optimizer.borrow_mut(),
                        &rows,
                        &labels,
                        Pooling::Mean,
                        1.0,
                    );
                    Tensor::from(loss.expect("a batch of known ids"))
                })
            })?;
        }
    }
    // Chapter 11: one training step of the character GPT at nanoGPT's CPU sizes, on Moby-Dick (when the
    // set-up fetched it), against the same model in PyTorch (scripts/gpt_pytorch.py).
    let text = transformer_anatomy::gpt::train::default_text();
    if !args.quick && text.exists() {
        use transformer_anatomy::gpt::{self, train::train_step, Corpus, GptTrainOptions, SampleOptions, TrainedGpt};
        let options = GptTrainOptions { device, ..GptTrainOptions::default() };
        let corpus = Corpus::from_file(&text, options.context)?;
        let gpt = TrainedGpt::new(corpus.vocab.clone(), &options.model_config(corpus.vocab.len()), device)?;
        let optimizer = RefCell::new(options.optimizer(&gpt.vs)?);
        let gpt_step = || {
            tch::with_grad(|| {
                train_step(&gpt, &mut optimizer.borrow_mut(), &corpus, &options).expect("sizes checked above")
            })
        };
        measure("train_step_gpt", options.batch, options.context, &gpt_step)?;
        // Writing 256 characters with and without the key/value cache, alternating round by round. The
        // weights are untrained, so every character is a fresh draw; both variants draw the same ones
        // (tests/gpt.rs checks that the text is identical).
        let write = |use_cache: bool| {
            let options = SampleOptions { max_new_tokens: 256, use_cache, ..SampleOptions::default() };
            let written = gpt::sample(&gpt, "Call me ", &options).expect("a prompt from the vocabulary");
            Tensor::from(written.log_prob)
        };
        if wanted("sample_cached_gpt") || wanted("sample_recompute_gpt") {
            let what = "sampling 256 characters, GPT".to_string();
            let (timings, ratio) =
                cached_and_recomputed(("sample", "gpt"), what, 256, (args.rounds, args.repeats.min(5)), None, &write)?;
            results.extend(timings);
            cache_ratios.push(ratio);
        }
    }
    // Decoding 64 tokens, with and without the key/value cache, on the small copy model (d_model 64,
    // 2 + 2 layers: each step is a few dozen tiny operations, so per-call overhead dominates) and on the
    // paper's base sizes (d_model 512, 8 heads, 6 + 6 layers: the recomputed prefix dominates).
    let source = batch.source.narrow(0, 0, 1);
    let generated = if args.quick { 8 } else { 64 };
    let vocab = Task::Copy.vocab().len();
    let small = Seq2SeqConfig {
        max_len: 80,
        ..TrainOptions { d_model: 64, ..TrainOptions::for_task(Task::Copy) }.model_config()
    };
    let base = Seq2SeqConfig { max_len: 80, dropout: 0.1, ..Seq2SeqConfig::paper(vocab, vocab) };
    let models: &[(&str, Seq2SeqConfig)] =
        if args.quick { &[("d64", small)] } else { &[("d64", small), ("d512", base)] };
    for (size, config) in models {
        let decoder = TrainedModel::new(Task::Copy, config, device)?;
        // The decoder writes fixed tokens (digits in turn), so that both variants do the same work whatever
        // the random weights prefer; tests/training.rs checks that both give the same tokens and
        // distributions.
        let decode = |use_cache: bool| {
            let mut steps = StepDecoder::new(&decoder.model, &source, BOS, use_cache);
            for i in 0..generated {
                let _ = steps.next_log_probs();
                steps.push(&Tensor::from_slice(&[4 + i % 10]).to_device(device));
            }
            steps.written().shallow_clone()
        };
        if wanted(&format!("decode_cached_{size}")) || wanted(&format!("decode_recompute_{size}")) {
            let what = format!("decoding {generated} tokens, {size}");
            let (timings, ratio) = cached_and_recomputed(
                ("decode", size),
                what,
                generated,
                (args.rounds, args.repeats),
                pytorch.as_mut(),
                &decode,
            )?;
            results.extend(timings);
            cache_ratios.push(ratio);
        }
    }

    if args.json {
        println!("{}", serde_json::to_string_pretty(&Report { results, cache_ratios })?);
        return Ok(());
    }
    let mode = if cfg!(debug_assertions) {
        "debug build: numbers are not meaningful, use `make bench`"
    } else {
        "release build"
    };
    println!("{} threads, {device:?}, {mode}", tch::get_num_threads());
    println!("{:<24} {:>5} {:>5} {:>10} {:>11} {:>7}", "case", "batch", "seq", "ours ms", "PyTorch ms", "ratio");
    for t in &results {
        let (theirs, ratio) = match (t.pytorch_median_s, t.ratio) {
            (Some(s), Some(r)) => (format!("{:.3}", s * 1e3), format!("{r:.2}")),
            _ => ("-".into(), "-".into()),
        };
        println!("{:<24} {:>5} {:>5} {:>10.3} {:>11} {:>7}", t.name, t.batch, t.seq, t.median_s * 1e3, theirs, ratio);
    }
    if pytorch.is_some() {
        println!(
            "ratio = ours / PyTorch's, the median of {} interleaved rounds' ratios: below 1 means the Rust version is faster",
            args.rounds.max(1)
        );
    }
    // One line per job that `cached_and_recomputed` timed both ways.
    for CacheRatio { what, pairs, ratio, pytorch_ratio, .. } in &cache_ratios {
        let theirs = pytorch_ratio.map(|r| format!("; PyTorch's {r:.2}×")).unwrap_or_default();
        println!("{what}: the key/value cache is {ratio:.2}× as fast as recomputing (median of {pairs} pairs{theirs})");
    }
    Ok(())
}
