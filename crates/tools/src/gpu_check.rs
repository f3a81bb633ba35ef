//! `make test-gpu` (`anatomy check-gpu`): the chapter's code on a GPU, checked against the same code on
//! the CPU. One seed gives the same weights on every device (`src/init.rs` draws them on the CPU), so the
//! modules, the tour and the pretrained model must print the CPU's numbers to float rounding; training
//! must still learn, decoding must give the same tokens with and without the cache, and, with a PyTorch
//! on the same GPU, the chapter's blocks must be no slower than the book's code. Each check is one row of
//! a table: what was measured, the bound it is held to, and whether it passed.
//!
//! LibTorch leaves TF32 off for float32 matrix products unless asked, so the GPU's products round as the
//! CPU's do, to a few units in the last place; the bounds here hold only with it off.
use std::path::PathBuf;

use anyhow::{bail, ensure, Result};
use tch::nn::{self, Module, ModuleT};
use tch::{Device, Kind, Tensor};

use transformer_anatomy::decoding::{beam_search, greedy, BeamOptions};
use transformer_anatomy::gpt::{self, GptConfig, GptModel, GptTrainOptions, SampleOptions};
use transformer_anatomy::init::{randn, sorted_variables};
use transformer_anatomy::inspect::max_abs_diff;
use transformer_anatomy::training::data::{Task, BOS, EOS};
use transformer_anatomy::training::{train, TrainOptions};
use transformer_anatomy::{
    causal_mask, AttentionHead, AttentionKind, BertConfig, BertModel, EncoderOptions, FeedForward,
    FusedMultiHeadAttention, MultiHeadAttention, Pass, Tokenizer, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer, TransformerForSequenceClassification,
};

use crate::bench::{self, BenchOptions};

/// How far a value computed on the GPU may be from the CPU's.
pub const VALUE_BOUND: f64 = 1e-4;

/// What to check besides the values.
#[derive(Clone, Debug)]
pub struct GpuCheckOptions {
    /// The pretrained model's folder (config.json, tokenizer.json, model.safetensors).
    pub model_dir: PathBuf,
    /// A Python whose PyTorch sees the same GPU: time the book's code against ours (`bench --pytorch`).
    pub pytorch: Option<PathBuf>,
    /// Timed runs per case and round in the bench.
    pub repeats: usize,
}

/// One row of the table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GpuCheck {
    pub name: String,
    pub measured: String,
    pub bound: String,
    pub passed: bool,
}

impl GpuCheck {
    /// The table's header, above the rows [`GpuCheck`]'s `Display` writes.
    pub const HEADER: &'static str = "check                                          verdict measured (bound)";

    fn new(name: impl Into<String>, measured: String, bound: impl Into<String>, passed: bool) -> Self {
        GpuCheck { name: name.into(), measured, bound: bound.into(), passed }
    }
}

/// One row of the table: the check, ok or FAILED, what was measured and (in brackets) its bound.
impl std::fmt::Display for GpuCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verdict = if self.passed { "ok" } else { "FAILED" };
        write!(f, "{:<46} {verdict:<7} {} ({})", self.name, self.measured, self.bound)
    }
}

/// Fails, saying what to do, unless `device` is a CUDA device that this LibTorch can use.
pub fn require_gpu(device: Device) -> Result<()> {
    ensure!(
        matches!(device, Device::Cuda(_)) && tch::Cuda::is_available(),
        "no CUDA device: this LibTorch sees no GPU (a CPU-only LibTorch, or no NVIDIA driver). make test-gpu \
         needs an NVIDIA GPU and a CUDA LibTorch (`make setup CUDA=1`); see docs/learners.md, Running on a GPU"
    );
    Ok(())
}

/// Runs every check on `device` (a CUDA device), handing each row to `report` as it is done.
pub fn run(options: &GpuCheckOptions, device: Device, report: &mut dyn FnMut(&GpuCheck)) -> Result<Vec<GpuCheck>> {
    require_gpu(device)?;
    let tokenizer = Tokenizer::from_model_dir(&options.model_dir)?;
    let mut checks = Vec::new();
    let mut add = |check: GpuCheck| {
        report(&check);
        checks.push(check);
    };
    for check in modules(device)? {
        add(check);
    }
    add(tour(&tokenizer, device)?);
    add(encode(options, &tokenizer, device)?);
    for check in copy_task(device)? {
        add(check);
    }
    for check in gpt(device)? {
        add(check);
    }
    if let Some(python) = &options.pytorch {
        for check in speed(python, options.repeats, device)? {
            add(check);
        }
    }
    Ok(checks)
}

type Forward = Box<dyn Fn(&Tensor) -> Tensor>;
type Build = fn(&nn::Path, &BertConfig) -> Result<Forward>;

/// Each of the chapter's modules at bert-base sizes, built from one seed on the CPU and on the GPU: the
/// same weights, and outputs that agree to float rounding.
fn modules(device: Device) -> Result<Vec<GpuCheck>> {
    let cases: [(&str, bool, Build); 11] = [
        ("attention head", false, |p, c| {
            let head = AttentionHead::new(p, c.hidden_size, c.head_dim(), 0.0);
            Ok(Box::new(move |x: &Tensor| head.forward(x, x, None, Pass::EVAL).output))
        }),
        ("multi-head attention, per head", false, |p, c| {
            let mha = MultiHeadAttention::new(p, &c.layer());
            Ok(Box::new(move |x: &Tensor| mha.forward_t(x, false)))
        }),
        ("fused attention, the chapter's steps", false, |p, c| {
            let mha = FusedMultiHeadAttention::new(p, &c.layer());
            Ok(Box::new(move |x: &Tensor| {
                transformer_anatomy::Attention::forward(&mha, x, x, None, Pass::WEIGHTS).output
            }))
        }),
        ("fused attention, libtorch's kernel", false, |p, c| {
            let mha = FusedMultiHeadAttention::new(p, &c.layer());
            Ok(Box::new(move |x: &Tensor| mha.forward_t(x, false)))
        }),
        ("fused attention, causal mask", false, |p, c| {
            let mha = FusedMultiHeadAttention::new(p, &c.layer());
            Ok(Box::new(move |x: &Tensor| {
                let mask = causal_mask(x.size()[1], x.device());
                transformer_anatomy::Attention::forward(&mha, x, x, Some(&mask), Pass::EVAL).output
            }))
        }),
        ("feed-forward", false, |p, c| {
            let ff = FeedForward::new(p, &c.layer());
            Ok(Box::new(move |x: &Tensor| ff.forward(x)))
        }),
        ("encoder layer, pre-LN", false, |p, c| {
            let layer = TransformerEncoderLayer::new(p, &c.layer());
            Ok(Box::new(move |x: &Tensor| layer.forward(x, None, false).hidden_state))
        }),
        ("decoder layer, causal", false, |p, c| {
            let layer = TransformerDecoderLayer::new(p, &c.layer());
            let memory = randn(&[2, 9, c.hidden_size], p.device());
            Ok(Box::new(move |x: &Tensor| {
                let mask = causal_mask(x.size()[1], x.device());
                layer.forward(x, &memory, Some(&mask), None, false, None).hidden_state
            }))
        }),
        ("encoder, 12 layers, BERT's", true, |p, c| {
            let encoder = TransformerEncoder::new(p, &BertConfig { options: EncoderOptions::bert(), ..c.clone() })?;
            Ok(Box::new(move |ids: &Tensor| encoder.forward_t(ids, false)))
        }),
        ("classifier", true, |p, c| {
            let config = BertConfig { num_labels: 3, num_hidden_layers: 2, ..c.clone() };
            let classifier = TransformerForSequenceClassification::new(p, &config)?;
            Ok(Box::new(move |ids: &Tensor| classifier.try_forward(ids, false).expect("ids in range")))
        }),
        ("GPT, 4 blocks", true, |p, c| {
            let config = GptConfig { vocab_size: 80, layers: 4, heads: 4, d_model: 128, context: 64, dropout: 0.0 };
            let model = GptModel::new(p, &config)?;
            let _ = c;
            Ok(Box::new(move |ids: &Tensor| {
                let ids = ids.remainder(80);
                model.forward(&ids, 0, Pass::EVAL, None).expect("a context of 64").logits
            }))
        }),
    ];
    let config = BertConfig::bert_base_uncased(EncoderOptions::book());
    cases.iter().map(|(name, reads_ids, build)| compare_module(name, *reads_ids, *build, &config, device)).collect()
}

/// One module built and run from seed 0 on the CPU, then on `device`.
fn compare_module(name: &str, reads_ids: bool, build: Build, config: &BertConfig, device: Device) -> Result<GpuCheck> {
    let run = |d: Device| -> Result<(Vec<(String, Tensor)>, Tensor)> {
        tch::manual_seed(0);
        let vs = nn::VarStore::new(d);
        let forward = build(&vs.root(), config)?;
        let input = if reads_ids {
            Tensor::randint(config.vocab_size, [2, 9], (Kind::Int64, Device::Cpu)).to_device(d)
        } else {
            randn(&[2, 9, config.hidden_size], d)
        };
        let output = tch::no_grad(|| forward(&input));
        Ok((sorted_variables(&vs), output))
    };
    let ((cpu_weights, cpu), (gpu_weights, gpu)) = (run(Device::Cpu)?, run(device)?);
    ensure!(cpu_weights.len() == gpu_weights.len(), "{name}: the two builds have different parameters");
    let weights = cpu_weights
        .iter()
        .zip(&gpu_weights)
        .map(|((_, a), (_, b))| max_abs_diff(a, &b.to_device(Device::Cpu)))
        .fold(0.0, f64::max);
    let same_shape = cpu.size() == gpu.size();
    let outputs = if same_shape { max_abs_diff(&cpu, &gpu.to_device(Device::Cpu)) } else { f64::INFINITY };
    let measured = format!("weights Δ {weights:.0e}, output {:?} Δ {outputs:.1e}", gpu.size());
    let bound = format!("weights equal, same shape, output Δ ≤ {VALUE_BOUND:.0e}");
    Ok(GpuCheck::new(format!("module: {name}"), measured, bound, weights == 0.0 && outputs <= VALUE_BOUND))
}

/// A printed line cut into its words (each number replaced by `#`) and its numbers, each with the text it
/// was printed as.
fn numbers(line: &str) -> (String, Vec<(f64, String)>) {
    let (mut text, mut values, mut current) = (String::new(), Vec::new(), String::new());
    let flush = |current: &mut String, text: &mut String, values: &mut Vec<(f64, String)>| {
        match current.parse::<f64>() {
            Ok(v) => {
                values.push((v, current.clone()));
                text.push('#');
            }
            Err(_) => text.push_str(current),
        }
        current.clear();
    };
    for c in line.chars() {
        let c = if c == '−' { '-' } else { c };
        let continues = !current.is_empty()
            && (c.is_ascii_digit() || c == '.' || c == 'e' || (matches!(c, '-' | '+') && current.ends_with('e')));
        if continues || c.is_ascii_digit() || (c == '-' && current.is_empty()) {
            current.push(c);
        } else {
            flush(&mut current, &mut text, &mut values);
            text.push(c);
        }
    }
    flush(&mut current, &mut text, &mut values);
    (text, values)
}

/// How far apart two printed numbers may be: the value bound, or one unit of the last digit printed
/// (a value printed with three decimals can round either way of a difference far below the bound).
fn printed_bound(printed: &str) -> f64 {
    let decimals = match printed.split_once('.') {
        Some((_, rest)) if !rest.contains('e') => rest.len(),
        _ => 0,
    };
    if decimals == 0 {
        return VALUE_BOUND;
    }
    VALUE_BOUND.max(10f64.powi(-(decimals as i32)) * 1.000_001)
}

/// Compares two printouts line by line: the same words, the same count of numbers, each within
/// [`printed_bound`]. Returns the largest difference, how many numbers were compared, and the first line
/// that broke the rule.
pub fn compare_printouts(cpu: &str, gpu: &str) -> (f64, usize, Option<String>) {
    let (cpu_lines, gpu_lines): (Vec<&str>, Vec<&str>) = (cpu.lines().collect(), gpu.lines().collect());
    if cpu_lines.len() != gpu_lines.len() {
        return (f64::INFINITY, 0, Some(format!("{} lines against {}", gpu_lines.len(), cpu_lines.len())));
    }
    let (mut largest, mut count) = (0.0f64, 0);
    for (a, b) in cpu_lines.iter().zip(&gpu_lines) {
        let ((text_a, values_a), (text_b, values_b)) = (numbers(a), numbers(b));
        if text_a != text_b || values_a.len() != values_b.len() {
            return (f64::INFINITY, count, Some(format!("{b:?} where the CPU printed {a:?}")));
        }
        for ((x, printed), (y, _)) in values_a.iter().zip(&values_b) {
            let d = (x - y).abs();
            largest = largest.max(d);
            count += 1;
            if d > printed_bound(printed) {
                return (largest, count, Some(format!("{b:?} where the CPU printed {a:?}")));
            }
        }
    }
    (largest, count, None)
}

/// The tour with the same seed on the CPU and on the GPU: every line alike, every number within bounds.
fn tour(tokenizer: &Tokenizer, device: Device) -> Result<GpuCheck> {
    let print = |d: Device| -> Result<String> {
        let mut out = Vec::new();
        crate::tour::tour(tokenizer, "time flies like an arrow", 42, d, &mut out, &mut |_| {})?;
        Ok(String::from_utf8(out)?)
    };
    let (cpu, gpu) = (print(Device::Cpu)?, print(device)?);
    let (largest, count, broken) = compare_printouts(&cpu, &gpu);
    let measured = match &broken {
        None => format!("{} lines, {count} numbers, largest Δ {largest:.1e}", cpu.lines().count()),
        Some(line) => format!("differs: {line}"),
    };
    Ok(GpuCheck::new(
        "tour, seed 42",
        measured,
        "same lines; Δ ≤ 1e-4 or one unit of the last printed digit",
        broken.is_none(),
    ))
}

/// The pretrained model on a text and a pair, on both devices.
fn encode(options: &GpuCheckOptions, tokenizer: &Tokenizer, device: Device) -> Result<GpuCheck> {
    let outputs = |d: Device| -> Result<Vec<Tensor>> {
        let model = BertModel::from_pretrained(&options.model_dir, AttentionKind::Fused, d)?;
        let mut out = Vec::new();
        for (a, b) in [("time flies like an arrow", None), ("Is it spam?", Some("Win a prize now"))] {
            let (_, output) = model.encode_text(tokenizer, a, b)?;
            out.push(output.last_hidden_state.to_device(Device::Cpu));
            out.push(
                transformer_anatomy::mean_pooled_embedding(&output.last_hidden_state, None).to_device(Device::Cpu),
            );
        }
        Ok(out)
    };
    let (cpu, gpu) = (outputs(Device::Cpu)?, outputs(device)?);
    let largest = cpu.iter().zip(&gpu).map(|(a, b)| max_abs_diff(a, b)).fold(0.0, f64::max);
    let measured = format!("hidden states and embeddings of a text and a pair: largest Δ {largest:.1e}");
    Ok(GpuCheck::new("encode, MiniLM", measured, format!("Δ ≤ {VALUE_BOUND:.0e}"), largest <= VALUE_BOUND))
}

/// Chapter 10 on the GPU: the copy task trained with its defaults, then decoded greedily and by beam
/// search, with and without the cache, and the same weights decoded on the CPU.
fn copy_task(device: Device) -> Result<Vec<GpuCheck>> {
    let options = TrainOptions { device, ..TrainOptions::for_task(Task::Copy) };
    let (trained, report) = tch::with_grad(|| train(&options))?;
    let exact = 100.0 * report.eval.exact_match;
    let mut checks = vec![GpuCheck::new(
        "train --task copy",
        format!(
            "{} steps in {:.1} s, exact match {exact:.1} % on {} held-out pairs",
            options.steps, report.seconds, options.eval_size
        ),
        "100 %",
        report.eval.exact_match == 1.0,
    )];
    let examples = Task::Copy.held_out(32, 7);
    let vocab = Task::Copy.vocab();
    let rows: Vec<Vec<i64>> = examples.iter().map(|e| vocab.encode(&e.source, Task::Copy)).collect::<Result<_>>()?;
    let source = transformer_anatomy::training::data::padded(&rows, device);
    let decode = |source: &Tensor, model: &transformer_anatomy::EncoderDecoder, cache: bool| -> Result<Vec<Vec<i64>>> {
        Ok(greedy(model, source, BOS, EOS, 12, cache)?.into_iter().map(|d| d.tokens).collect())
    };
    let (cached, recomputed) = (decode(&source, &trained.model, true)?, decode(&source, &trained.model, false)?);
    let on_cpu = transformer_anatomy::training::TrainedModel::new(Task::Copy, &trained.config, Device::Cpu)?;
    transformer_anatomy::training::checkpoint::copy_into(&on_cpu, trained.named_parameters().into_iter().collect())?;
    let cpu = decode(&source.to_device(Device::Cpu), &on_cpu.model, true)?;
    let same = cached == recomputed && cached == cpu;
    checks.push(GpuCheck::new(
        "greedy decoding",
        format!("32 sources: cached, recomputed and on the CPU {}", if same { "the same tokens" } else { "differ" }),
        "the same tokens",
        same,
    ));
    let beam = |cache: bool| -> Result<Vec<Vec<i64>>> {
        let options = BeamOptions { width: 4, length_penalty: 0.6, max_new_tokens: 12, use_cache: cache };
        Ok(beam_search(&trained.model, &source.narrow(0, 0, 1), BOS, EOS, options)?
            .hypotheses
            .into_iter()
            .map(|h| h.tokens)
            .collect())
    };
    let (with, without) = (beam(true)?, beam(false)?);
    checks.push(GpuCheck::new(
        "beam search, width 4",
        format!(
            "{} hypotheses with and without the cache: {}",
            with.len(),
            if with == without { "the same" } else { "differ" }
        ),
        "the same hypotheses",
        with == without,
    ));
    Ok(checks)
}

/// Chapter 11: 300 steps of the character GPT on both devices (no dropout, batches drawn on the CPU: the
/// same run), then 200 characters sampled with and without the cache.
fn gpt(device: Device) -> Result<Vec<GpuCheck>> {
    if !gpt::train::default_text().exists() {
        bail!("Moby-Dick is missing: run `make setup`");
    }
    let run = |d: Device| {
        tch::with_grad(|| {
            gpt::train::train_gpt(&GptTrainOptions { steps: 300, device: d, ..Default::default() }, &mut |_| {})
        })
    };
    let ((_, _, cpu), (trained, _, on_gpu)) = (run(Device::Cpu)?, run(device)?);
    let gap = (cpu.val_loss - on_gpu.val_loss).abs();
    let mut checks = vec![GpuCheck::new(
        "gpt train, 300 steps",
        format!("held-out loss {:.4} (the CPU's {:.4}), {:.1} s", on_gpu.val_loss, cpu.val_loss, on_gpu.seconds),
        "within 1e-2 of the CPU's",
        gap <= 1e-2,
    )];
    let sample = |cache: bool| {
        gpt::sample(
            &trained,
            "Call me ",
            &SampleOptions { max_new_tokens: 200, use_cache: cache, ..Default::default() },
        )
    };
    let (with, without) = (sample(true)?, sample(false)?);
    checks.push(GpuCheck::new(
        "gpt sample, 200 characters",
        format!("with and without the cache: {}", if with.text == without.text { "the same text" } else { "differ" }),
        "the same text",
        with.text == without.text,
    ));
    Ok(checks)
}

/// The bench against PyTorch on the same GPU: per-head and fused attention and the encoders, each at most
/// as slow as the book's code (the ratio ours / PyTorch's, interleaved rounds, at most 1.0).
fn speed(python: &std::path::Path, repeats: usize, device: Device) -> Result<Vec<GpuCheck>> {
    let options = BenchOptions {
        repeats,
        rounds: 5,
        quick: false,
        only: Some("mha,encoder,decode".into()),
        pytorch: Some(python.to_path_buf()),
    };
    let report = bench::run(&options, device)?;
    Ok(report
        .results
        .iter()
        .filter_map(|t| {
            let ratio = t.ratio?;
            let held = t.name.starts_with("mha") || t.name.starts_with("encoder");
            Some(GpuCheck::new(
                format!("speed: {} {}×{}", t.name, t.batch, t.seq),
                format!(
                    "ours {:.3} ms (host {:.3}), PyTorch {:.3} ms: ratio {ratio:.2}",
                    t.median_s * 1e3,
                    t.host_s * 1e3,
                    t.pytorch_median_s.unwrap_or(f64::NAN) * 1e3
                ),
                if held { "ratio ≤ 1.00" } else { "reported" },
                !held || ratio <= 1.0,
            ))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printouts_compare_by_words_and_numbers() {
        let cpu = "   values [0.3425, -0.1923, 1.0000]\n   loss   2.711 → 0.512\n";
        let rounded = "   values [0.3426, -0.1923, 1.0000]\n   loss   2.711 → 0.513\n";
        assert_eq!(compare_printouts(cpu, rounded).2, None, "one unit of the last printed digit is rounding");
        let off = "   values [0.3427, -0.1923, 1.0000]\n   loss   2.711 → 0.512\n";
        assert!(compare_printouts(cpu, off).2.is_some(), "two units at four decimals are 2e-4");
        let other_words = "   values [0.3425, -0.1923, 1.0000]\n   loss   2.711 -> 0.512\n";
        assert!(compare_printouts(cpu, other_words).2.is_some());
        let (_, count, _) = compare_printouts(cpu, cpu);
        assert_eq!(count, 5);
        let values = |line: &str| numbers(line).1.into_iter().map(|(v, _)| v).collect::<Vec<_>>();
        assert_eq!(values("shape  [1, 5, 768]"), [1.0, 5.0, 768.0]);
        assert_eq!(values("max |ours − libtorch's| = 2.38e-7"), [2.38e-7]);
        assert_eq!(values("values [-0.1923, 1.5]"), [-0.1923, 1.5]);
    }
}
