//! The cases themselves: chapter 3's attention and encoders, chapter 10's training step and decoding with
//! and without the cache, chapter 11's GPT and chapter 12's MiniLM, each timed by [`super`]'s rules.
use std::cell::RefCell;

use anyhow::Result;
use tch::nn::{self, ModuleT, OptimizerConfig};
use tch::{Device, Kind, Tensor};

use super::peer::PyTorch;
use super::{
    cached_and_recomputed, median, median_seconds, ratio_of_rounds, BenchOptions, BenchReport, CacheRatio, Run, Timing,
    SETTLE,
};
use transformer_anatomy::decoding::StepDecoder;
use transformer_anatomy::inference_mode::inference_mode_guard;
use transformer_anatomy::training::data::{Batch, Task, BOS};
use transformer_anatomy::training::{label_smoothed_loss, TrainOptions, TrainedModel};
use transformer_anatomy::{
    Attention, BertConfig, EncoderOptions, FusedMultiHeadAttention, MultiHeadAttention, Pass, Seq2SeqConfig,
    TransformerEncoder,
};

/// Times every case `options` asks for on `device` (with its PyTorch peer, if it names one). The cases
/// are built and run in one order, so that seed 0 draws the same weights and inputs in every run.
pub fn run(args: &BenchOptions, device: Device) -> Result<BenchReport> {
    let pytorch = args.pytorch.as_deref().map(|python| PyTorch::start(python, device)).transpose()?;
    let mut bench = Bench { args, pytorch, results: Vec::new(), cache_ratios: Vec::new() };
    tch::manual_seed(0);
    let _guard = tch::no_grad_guard();
    attention_and_encoders(&mut bench, device)?;
    // Chapter 10's copy task: the batch (64 pairs of length 10) a training step learns from, and whose first
    // source the decoding cases read.
    let examples = Task::Copy.held_out(64, 5);
    let batch = Batch::new(&examples, &Task::Copy.vocab(), Task::Copy, device)?;
    copy_training_steps(&mut bench, &batch, device)?;
    minilm(&mut bench, device)?;
    gpt(&mut bench, device)?;
    decoding(&mut bench, &batch.source.narrow(0, 0, 1), device)?;
    Ok(BenchReport { results: bench.results, cache_ratios: bench.cache_ratios })
}

/// What the cases share: the options, the PyTorch peer and the timings so far.
struct Bench<'a> {
    args: &'a BenchOptions,
    pytorch: Option<PyTorch>,
    results: Vec<Timing>,
    cache_ratios: Vec<CacheRatio>,
}

impl Bench<'_> {
    /// `--only a,b`: the cases whose name contains one of the texts.
    fn wanted(&self, name: &str) -> bool {
        self.args.only.as_deref().is_none_or(|only| only.split(',').any(|o| name.contains(o.trim())))
    }

    /// Times the case `name` (when wanted): ours, then PyTorch's right after, round by round.
    fn measure(&mut self, name: &str, batch: i64, seq: i64, f: &dyn Fn() -> Tensor) -> Result<()> {
        if !self.wanted(name) {
            return Ok(());
        }
        let (mut ours, mut theirs) = (Vec::<Run>::new(), Vec::<(f64, Option<f64>)>::new());
        for _ in 0..if self.pytorch.is_some() { self.args.rounds.max(1) } else { 1 } {
            ours.push(median_seconds(self.args.repeats, f));
            if let Some(py) = self.pytorch.as_mut() {
                // Each side's worker threads keep spinning for a while after their last operation and
                // would take the cores from the other side: let them fall asleep before the other starts.
                std::thread::sleep(SETTLE);
                theirs.push(py.time(name, batch, seq, self.args.repeats)?);
                std::thread::sleep(SETTLE);
            }
        }
        self.results.push(timing(name, batch, seq, &ours, &theirs));
        Ok(())
    }

    /// Keeps a job's two timings, with and without the key/value cache, and the cache's speed-up.
    fn keep(&mut self, (timings, ratio): ([Timing; 2], CacheRatio)) {
        self.results.extend(timings);
        self.cache_ratios.push(ratio);
    }
}

/// One case's row: the medians of our rounds and of PyTorch's, and the median of the rounds' ratios.
fn timing(name: &str, batch: i64, seq: i64, ours: &[Run], theirs: &[(f64, Option<f64>)]) -> Timing {
    let (our_totals, their_totals): (Vec<f64>, Vec<f64>) =
        (ours.iter().map(|r| r.total).collect(), theirs.iter().map(|t| t.0).collect());
    let ratio = (!theirs.is_empty()).then(|| ratio_of_rounds(&our_totals, &their_totals));
    let pytorch_median_s = (!theirs.is_empty()).then(|| median(their_totals));
    let their_hosts: Vec<f64> = theirs.iter().filter_map(|t| t.1).collect();
    let pytorch_host_s = (!their_hosts.is_empty()).then(|| median(their_hosts));
    let host_s = median(ours.iter().map(|r| r.host).collect());
    let median_s = median(our_totals);
    Timing { name: name.into(), batch, seq, median_s, host_s, pytorch_median_s, pytorch_host_s, ratio }
}

/// Chapter 3: per-head and fused multi-head attention and libtorch's kernel at every batch and length, and
/// the BERT-base encoder as the book builds it and as BERT does.
fn attention_and_encoders(bench: &mut Bench, device: Device) -> Result<()> {
    let config = BertConfig::bert_base_uncased(EncoderOptions::book());
    let bert_config = BertConfig { options: EncoderOptions::bert(), ..config.clone() };
    let vs = nn::VarStore::new(device);
    let per_head = MultiHeadAttention::new(vs.root() / "per_head", &config.layer());
    let fused = FusedMultiHeadAttention::new(vs.root() / "fused", &config.layer());
    let encoders = [
        ("encoder_bert_base_book", TransformerEncoder::new(vs.root() / "book", &config)?),
        ("encoder_bert_base_bert", TransformerEncoder::new(vs.root() / "bert", &bert_config)?),
    ];
    let quick = bench.args.quick;
    let (batches, seqs): (&[i64], &[i64]) = if quick { (&[1], &[5]) } else { (&[1, 8], &[5, 128, 512]) };
    // Evaluation runs in inference mode, as the PyTorch side's does (`torch.inference_mode()`).
    let _inference = inference_mode_guard();
    for &batch in batches {
        for &seq in seqs {
            let x = transformer_anatomy::init::randn(&[batch, seq, config.hidden_size], device);
            bench.measure("mha_per_head", batch, seq, &|| per_head.forward(&x, &x, None, Pass::EVAL).output)?;
            // Asking for the weights keeps the chapter's steps; without, evaluation runs libtorch's kernel.
            bench.measure("mha_fused", batch, seq, &|| fused.forward(&x, &x, None, Pass::WEIGHTS).output)?;
            bench.measure("mha_libtorch_sdpa", batch, seq, &|| fused.forward(&x, &x, None, Pass::EVAL).output)?;
        }
    }
    // The encoders at 1 × 128 tokens; on a GPU, where a whole encoder takes milliseconds, at every size
    // the attention cases take.
    let sizes: Vec<(i64, i64)> = match (quick, device) {
        (true, _) => vec![(1, 5)],
        (false, Device::Cuda(_)) => batches.iter().flat_map(|&b| seqs.iter().map(move |&s| (b, s))).collect(),
        (false, _) => vec![(1, 128)],
    };
    for (batch, seq) in sizes {
        let ids = Tensor::randint(config.vocab_size, [batch, seq], (Kind::Int64, Device::Cpu)).to_device(device);
        for (name, encoder) in &encoders {
            bench.measure(name, batch, seq, &|| encoder.forward_t(&ids, false))?;
        }
    }
    Ok(())
}

/// Chapter 10: one training step of the copy model on `batch` at d_model 64 and 128, against PyTorch's
/// nn.Transformer of the same sizes.
fn copy_training_steps(bench: &mut Bench, batch: &Batch, device: Device) -> Result<()> {
    let sizes: &[i64] = if bench.args.quick { &[64] } else { &[64, 128] };
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
        bench.measure(&format!("train_step_copy_d{d_model}"), 64, 10, &train_step)?;
    }
    Ok(())
}

/// Chapter 12: MiniLM reading a batch of 32 messages of 128 tokens (the frozen body's feature pass,
/// inference mode), and one fine-tuning step on such a batch (training mode, the loss on the mean-pooled
/// state, backward, gradients clipped, fused AdamW), against Hugging Face's BertModel doing the same.
/// Only with the model downloaded, and not in a quick run.
fn minilm(bench: &mut Bench, device: Device) -> Result<()> {
    use transformer_anatomy::classify::fine_tune::train_step;
    use transformer_anatomy::classify::Pooling;
    use transformer_anatomy::training::fused_adamw::FusedAdamW;
    use transformer_anatomy::{AttentionKind, BertModel};
    if bench.args.quick || !bench.wanted("minilm") {
        return Ok(());
    }
    let Ok(dir) = transformer_anatomy::model_dir::resolve_model_dir(None) else { return Ok(()) };
    let body = BertModel::from_pretrained(&dir, AttentionKind::Fused, device)?;
    let ids = Tensor::randint(body.config.vocab_size, [32, 128], (Kind::Int64, Device::Cpu)).to_device(device);
    let rows: Vec<Vec<i64>> = Vec::<Vec<i64>>::try_from(&ids.to_device(Device::Cpu))?;
    let rows: Vec<&[i64]> = rows.iter().map(Vec::as_slice).collect();
    bench.measure("classify_features_minilm", 32, 128, &|| {
        let _inference = transformer_anatomy::inference_mode::inference_mode_guard();
        let _no_grad = tch::no_grad_guard();
        transformer_anatomy::classify::features::read_batch(&body, &rows, Pass::EVAL).expect("ids in range").0
    })?;
    let tuned = BertModel::from_pretrained(&dir, AttentionKind::Fused, device)?;
    let classifier = transformer_anatomy::init::linear(tuned.vs.root() / "classifier", tuned.config.hidden_size, 2);
    let optimizer = RefCell::new(FusedAdamW::new(&tuned.vs, nn::AdamW { wd: 0.01, ..Default::default() }, 5e-5)?);
    let labels: Vec<i64> = (0..32).map(|i| i % 2).collect();
    bench.measure("train_step_classify_minilm", 32, 128, &|| {
        tch::with_grad(|| {
            let mut optimizer = optimizer.borrow_mut();
            let loss = train_step(&tuned, &classifier, &mut optimizer, &rows, &labels, Pooling::Mean, 1.0);
            Tensor::from(loss.expect("a batch of known ids"))
        })
    })
}

/// Chapter 11: one training step of the character GPT at nanoGPT's CPU sizes, on Moby-Dick (when the
/// set-up fetched it), against the same model in PyTorch (scripts/gpt_pytorch.py); and writing 256
/// characters with and without the key/value cache. Not in a quick run.
fn gpt(bench: &mut Bench, device: Device) -> Result<()> {
    use transformer_anatomy::gpt::{self, train::train_step, Corpus, GptTrainOptions, SampleOptions, TrainedGpt};
    let text = transformer_anatomy::gpt::train::default_text();
    if bench.args.quick || !text.exists() {
        return Ok(());
    }
    let options = GptTrainOptions { device, ..GptTrainOptions::default() };
    let corpus = Corpus::from_file(&text, options.context)?;
    let gpt = TrainedGpt::new(corpus.vocab.clone(), &options.model_config(corpus.vocab.len()), device)?;
    let optimizer = RefCell::new(options.optimizer(&gpt.vs)?);
    let gpt_step = || {
        tch::with_grad(|| {
            train_step(&gpt, &mut optimizer.borrow_mut(), &corpus, &options).expect("sizes checked above")
        })
    };
    bench.measure("train_step_gpt", options.batch, options.context, &gpt_step)?;
    // Writing 256 characters with and without the key/value cache, alternating round by round. The
    // weights are untrained, so every character is a fresh draw; both variants draw the same ones
    // (tests/gpt.rs checks that the text is identical).
    let write = |use_cache: bool| {
        let options = SampleOptions { max_new_tokens: 256, use_cache, ..SampleOptions::default() };
        let written = gpt::sample(&gpt, "Call me ", &options).expect("a prompt from the vocabulary");
        Tensor::from(written.log_prob)
    };
    if bench.wanted("sample_cached_gpt") || bench.wanted("sample_recompute_gpt") {
        let what = "sampling 256 characters, GPT".to_string();
        let (rounds, repeats) = (bench.args.rounds, bench.args.repeats.min(5));
        bench.keep(cached_and_recomputed(("sample", "gpt"), what, 256, (rounds, repeats), None, &write)?);
    }
    Ok(())
}

/// Decoding 64 tokens from `source`, with and without the key/value cache, on the small copy model
/// (d_model 64, 2 + 2 layers: each step is a few dozen tiny operations, so per-call overhead dominates) and
/// on the paper's base sizes (d_model 512, 8 heads, 6 + 6 layers: the recomputed prefix dominates).
fn decoding(bench: &mut Bench, source: &Tensor, device: Device) -> Result<()> {
    let quick = bench.args.quick;
    let generated = if quick { 8 } else { 64 };
    let vocab = Task::Copy.vocab().len();
    let small = Seq2SeqConfig {
        max_len: 80,
        ..TrainOptions { d_model: 64, ..TrainOptions::for_task(Task::Copy) }.model_config()
    };
    let base = Seq2SeqConfig { max_len: 80, dropout: 0.1, ..Seq2SeqConfig::paper(vocab, vocab) };
    let models: &[(&str, Seq2SeqConfig)] = if quick { &[("d64", small)] } else { &[("d64", small), ("d512", base)] };
    for (size, config) in models {
        let decoder = TrainedModel::new(Task::Copy, config, device)?;
        // The decoder writes fixed tokens (digits in turn), so that both variants do the same work whatever
        // the random weights prefer; tests/training.rs checks that both give the same tokens and
        // distributions.
        let decode = |use_cache: bool| {
            let mut steps = StepDecoder::new(&decoder.model, source, BOS, use_cache);
            for i in 0..generated {
                let _ = steps.next_log_probs();
                steps.push(&Tensor::from_slice(&[4 + i % 10]).to_device(device));
            }
            steps.written().shallow_clone()
        };
        if bench.wanted(&format!("decode_cached_{size}")) || bench.wanted(&format!("decode_recompute_{size}")) {
            let what = format!("decoding {generated} tokens, {size}");
            let (rounds, repeats) = (bench.args.rounds, bench.args.repeats);
            let pytorch = bench.pytorch.as_mut();
            let timed = cached_and_recomputed(("decode", size), what, generated, (rounds, repeats), pytorch, &decode)?;
            bench.keep(timed);
        }
    }
    Ok(())
}
