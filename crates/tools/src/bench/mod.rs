//! How long the chapters' building blocks take on this machine and, against a PyTorch process running the
//! same blocks, how that compares: speed is part of correctness here, so the same step in Rust must not
//! be slower than in PyTorch on the same CPU.
//!
//! Every case is warmed up, then run `repeats` times; the median is reported. A shared machine's speed
//! drifts by tens of percent from one minute to the next, so a comparison must not time one side and
//! then the other: with a peer ([`peer::PyTorch`], `scripts/bench_pytorch.py --serve`), PyTorch times
//! each case right after we do, and this alternates for `rounds` rounds; each side reports the median of
//! its rounds, and the ratio is the median of the rounds' own ratios (each round's two halves saw about
//! the same machine). Both sides run the same LibTorch (2.13.0) on the same device and threads, the
//! evaluation cases in inference mode. On a GPU, each timed run waits for the GPU's work
//! (`synchronize`), and the time until the call returned is kept apart as the host's own part: launching
//! a kernel costs the host a few microseconds whatever its size, so at a few tokens that part, not the
//! GPU's arithmetic, is what a comparison measures. `anatomy bench` prints what [`run`] returns; build in
//! release mode (`make bench`).
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use serde::Serialize;
use tch::{Device, Tensor};

mod cases;
pub mod peer;

pub use cases::run;
use peer::PyTorch;

/// What to time, and how often.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Timed runs per case and round; the median is reported.
    pub repeats: usize,
    /// Rounds per case when comparing with PyTorch (ours, theirs, ours, theirs, ...).
    pub rounds: usize,
    /// Only batch 1 and sequence length 5, to check that the benchmark runs.
    pub quick: bool,
    /// Only the cases whose name contains this text.
    pub only: Option<String>,
    /// A Python with torch 2.13: time the same cases in PyTorch, on the same device, interleaved with ours.
    pub pytorch: Option<PathBuf>,
}

/// Every case's times, and the key/value cache's speed-ups.
#[derive(Serialize)]
pub struct BenchReport {
    pub results: Vec<Timing>,
    pub cache_ratios: Vec<CacheRatio>,
}

/// How long one side of an interleaved comparison waits before the other side runs.
pub(crate) const SETTLE: std::time::Duration = std::time::Duration::from_millis(300);

/// One case: ours, and PyTorch's when compared.
#[derive(Serialize)]
pub struct Timing {
    pub name: String,
    pub batch: i64,
    pub seq: i64,
    pub median_s: f64,
    /// The host's part of a run: the median time until the call returned, before waiting for the device's
    /// work (on the CPU, the whole run).
    pub host_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pytorch_median_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pytorch_host_s: Option<f64>,
    /// Ours / PyTorch's: the median over the rounds of each round's ratio.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
}

impl BenchReport {
    /// The table `anatomy bench` prints: one row per case (on a GPU with the host's part of each run beside
    /// the whole), the ratio's meaning when a peer was timed in `rounds` rounds, and one line per job timed
    /// with and without the key/value cache.
    pub fn table(&self, device: Device, rounds: Option<usize>) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let gpu = matches!(device, Device::Cuda(_));
        let host_header = if gpu { format!(" {:>9} {:>9}", "host ms", "theirs") } else { String::new() };
        let header = ["case", "batch", "seq", "ours ms", "PyTorch ms", "ratio"];
        let _ = writeln!(
            out,
            "{:<24} {:>5} {:>5} {:>10} {:>11} {:>7}{host_header}",
            header[0], header[1], header[2], header[3], header[4], header[5]
        );
        let ms = |s: Option<f64>| s.map_or("-".to_string(), |s| format!("{:.3}", s * 1e3));
        for t in &self.results {
            let ratio = t.ratio.map_or("-".to_string(), |r| format!("{r:.2}"));
            let host =
                if gpu { format!(" {:>9} {:>9}", ms(Some(t.host_s)), ms(t.pytorch_host_s)) } else { String::new() };
            let theirs = ms(t.pytorch_median_s);
            let _ = writeln!(
                out,
                "{:<24} {:>5} {:>5} {:>10.3} {theirs:>11} {ratio:>7}{host}",
                t.name,
                t.batch,
                t.seq,
                t.median_s * 1e3
            );
        }
        if let Some(rounds) = rounds {
            let _ = writeln!(
                out,
                "ratio = ours / PyTorch's, the median of {rounds} interleaved rounds' ratios: below 1 means the Rust version is faster"
            );
        }
        for CacheRatio { what, pairs, ratio, pytorch_ratio, .. } in &self.cache_ratios {
            let theirs = pytorch_ratio.map(|r| format!("; PyTorch's {r:.2}×")).unwrap_or_default();
            let _ = writeln!(
                out,
                "{what}: the key/value cache is {ratio:.2}× as fast as recomputing (median of {pairs} pairs{theirs})"
            );
        }
        out
    }
}

pub(crate) fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Ours / PyTorch's for a case timed in rounds: the median of the rounds' own ratios.
pub(crate) fn ratio_of_rounds(ours: &[f64], theirs: &[f64]) -> f64 {
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
pub(crate) fn cached_and_recomputed(
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
        ours.push(
            (0..pairs).map(|_| (seconds(&|| run(true)).total, seconds(&|| run(false)).total)).collect::<Vec<_>>(),
        );
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
        let median_s = median(times(&all_ours));
        Timing {
            name: format!("{prefix}_{variant}_{suffix}"),
            batch: 1,
            seq,
            median_s,
            host_s: median_s, // a whole decoding reads its tokens step by step: no part of it is left queued
            pytorch_median_s: against.map(|a| a.0),
            pytorch_host_s: None,
            ratio: against.map(|a| a.1),
        }
    });
    let pytorch_ratio = (!theirs.is_empty()).then(|| speed_up(&all_theirs));
    let ratio = CacheRatio { name, what, pairs: rounds * pairs, ratio: speed_up(&all_ours), pytorch_ratio };
    Ok((timings, ratio))
}

/// How much faster the cached variant of a job is: the median over `pairs` back-to-back pairs.
#[derive(Serialize)]
pub struct CacheRatio {
    pub name: String,
    /// The job in words, for the table's closing line.
    #[serde(skip)]
    pub what: String,
    pub pairs: usize,
    pub ratio: f64,
    /// The same for PyTorch's version of the job, over as many pairs, when it was compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pytorch_ratio: Option<f64>,
}

/// One timed run's seconds: until the call returned, and until its work was done (on a GPU, after
/// waiting for it; on the CPU, the same).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Run {
    pub host: f64,
    pub total: f64,
}

pub(crate) fn seconds(f: &dyn Fn() -> Tensor) -> Run {
    let start = Instant::now();
    let out = f();
    let host = start.elapsed().as_secs_f64();
    if let Device::Cuda(i) = out.device() {
        tch::Cuda::synchronize(i as i64);
    }
    Run { host, total: start.elapsed().as_secs_f64() }
}

/// The medians of `repeats` runs after two to warm up (whose work is waited for).
pub(crate) fn median_seconds(repeats: usize, f: &dyn Fn() -> Tensor) -> Run {
    for _ in 0..2 {
        let _ = seconds(f);
    }
    let runs: Vec<Run> = (0..repeats.max(1)).map(|_| seconds(f)).collect();
    Run { host: median(runs.iter().map(|r| r.host).collect()), total: median(runs.iter().map(|r| r.total).collect()) }
}
