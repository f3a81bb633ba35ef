//! Chapter section 10: the loss, the schedule, the training loop, checkpoints and decoding.
mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rstest::rstest;
use tch::nn::OptimizerConfig;
use tch::{nn, Device, Kind, Tensor};
use transformer_anatomy::decoding::{beam_search, greedy, length_penalty, BeamOptions};
use transformer_anatomy::training::data::{Batch, Task, BOS, EOS, PAD};
use transformer_anatomy::training::loss::{label_smoothed_loss, smoothed_target_entropy, smoothed_targets};
use transformer_anatomy::training::{average, learning_rate, load, save, train, TrainOptions, TrainedModel};
use transformer_anatomy::{EncoderDecoder, Seq2SeqConfig};

// --- the loss ---

/// The loss against the numbers PyTorch gives (scripts/loss_reference.py → tests/data/loss_reference.json).
#[test]
fn the_loss_matches_pytorch() {
    let _generator = common::generator();
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/loss_reference.json")).unwrap();
    let reference: serde_json::Value = serde_json::from_str(&text).unwrap();
    let logits: Vec<Vec<Vec<f64>>> = serde_json::from_value(reference["logits"].clone()).unwrap();
    let targets: Vec<Vec<i64>> = serde_json::from_value(reference["targets"].clone()).unwrap();
    let flat: Vec<f64> = logits.iter().flatten().flatten().copied().collect();
    let log_probs = Tensor::from_slice(&flat).view([2, 3, 6]).log_softmax(-1, Kind::Double);
    let targets = Tensor::from_slice(&targets.concat()).view([2, 3]);
    let cases = reference["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    for case in cases {
        let eps = case["epsilon"].as_f64().unwrap();
        let loss = label_smoothed_loss(&log_probs, &targets, eps, 0);
        assert_eq!(loss.tokens, 5, "one of the six positions is padding");
        for (ours, theirs) in [
            (loss.cross_entropy.double_value(&[]), case["cross_entropy"].as_f64().unwrap()),
            (loss.kl_divergence.double_value(&[]), case["kl_divergence"].as_f64().unwrap()),
        ] {
            assert!((ours - theirs).abs() < 1e-6, "ε = {eps}: ours {ours}, PyTorch {theirs}");
        }
    }
}

/// The slides' six-word example: a one-hot target on "i", a prediction, and the smoothed target.
#[test]
fn smoothing_moves_epsilon_off_the_right_token() {
    let _generator = common::generator();
    let target = Tensor::from_slice(&[2i64]); // a, am, i, thanks, student, <eos>: "i" is class 2
    let q = smoothed_targets(&target, 6, 0.1);
    let q = Vec::<f64>::try_from(&q.get(0).to_kind(Kind::Double)).unwrap();
    assert!((q[2] - (0.9 + 0.1 / 6.0)).abs() < 1e-6 && (q[0] - 0.1 / 6.0).abs() < 1e-6, "{q:?}");
    assert!((q.iter().sum::<f64>() - 1.0).abs() < 1e-6);
    // The KL divergence of the target from itself is 0: cross-entropy minus entropy.
    let log_q = Tensor::from_slice(&q).log().view([1, 1, 6]);
    let loss = label_smoothed_loss(&log_q, &target.view([1, 1]), 0.1, -1);
    assert!(loss.kl_divergence.double_value(&[]).abs() < 1e-9);
    assert!((loss.cross_entropy.double_value(&[]) - smoothed_target_entropy(6, 0.1)).abs() < 1e-9);
}

// --- the schedule ---

#[test]
fn the_schedule_follows_the_formula() {
    let _generator = common::generator();
    let (d, w) = (512, 4000);
    for step in [1u64, 10, 100, 3999, 4000, 4001, 10_000, 100_000] {
        let s = step as f64;
        let expected = (d as f64).powf(-0.5) * s.powf(-0.5).min(s * (w as f64).powf(-1.5));
        assert!((learning_rate(step, d, w, 1.0) - expected).abs() < 1e-15, "step {step}");
    }
    // Linear warm-up, peak at `warmup`, then 1/√step: four times the steps, half the rate.
    assert!((learning_rate(2000, d, w, 1.0) * 2.0 - learning_rate(4000, d, w, 1.0)).abs() < 1e-12);
    assert!((learning_rate(16_000, d, w, 1.0) * 2.0 - learning_rate(4000, d, w, 1.0)).abs() < 1e-12);
    assert!((learning_rate(4000, d, w, 2.0) - 2.0 * learning_rate(4000, d, w, 1.0)).abs() < 1e-15);
}

// --- data ---

#[test]
fn the_tasks_make_the_pairs_they_promise() {
    let _generator = common::generator();
    let dates = Task::Dates;
    assert_eq!(
        dates.tokenize("The twenty-second of November 2026"),
        ["the", "twenty-second", "of", "november", "2", "0", "2", "6"]
    );
    assert_eq!(dates.detokenize(&dates.tokenize("2026-11-22")), "2026-11-22");
    let mut rng = transformer_anatomy::training::data::Rng::new(7);
    for _ in 0..200 {
        let e = Task::Reverse.sample(&mut rng);
        assert_eq!(e.source.len(), 10);
        assert_eq!(e.target, e.source.iter().rev().cloned().collect::<Vec<_>>());
        let d = dates.sample(&mut rng);
        let iso = dates.detokenize(&d.target);
        assert_eq!(iso.len(), 10, "{iso}");
        let year = &iso[..4];
        assert!(d.source.concat().contains(year), "{:?} → {iso}", d.source);
    }
    // Held-out pairs never come up in training.
    let held_out = Task::Copy.held_out(50, 3);
    let mut stream = transformer_anatomy::training::data::TrainStream::new(Task::Copy, 3, &held_out);
    let sources: std::collections::HashSet<_> = held_out.iter().map(|e| e.source.clone()).collect();
    assert_eq!(sources.len(), 50);
    assert!(stream.next_examples(2000).iter().all(|e| !sources.contains(&e.source)));
}

#[test]
fn a_batch_shifts_the_target_and_pads() {
    let _generator = common::generator();
    let task = Task::Dates;
    let examples = [
        transformer_anatomy::training::SentencePair {
            source: task.tokenize("1 may 1999"),
            target: task.tokenize("1999-05-01"),
        },
        transformer_anatomy::training::SentencePair {
            source: task.tokenize("the first of may 1999"),
            target: task.tokenize("1999-05-01"),
        },
    ];
    let batch = Batch::new(&examples, &task.vocab(), task, Device::Cpu).unwrap();
    assert_eq!(batch.source.size(), [2, 8]); // the, first, of, may, 1, 9, 9, 9
    assert_eq!(batch.target_in.size(), [2, 11]);
    assert_eq!(batch.target_in.int64_value(&[0, 0]), BOS);
    assert_eq!(batch.target_out.int64_value(&[0, 10]), EOS);
    assert_eq!(batch.source.int64_value(&[0, 6]), PAD); // 1, may, 1, 9, 9, 9, then padding
    assert_eq!(batch.tokens, 22);
    // target_in is target_out shifted right by one.
    common::assert_close(&batch.target_in.narrow(1, 1, 10), &batch.target_out.narrow(1, 0, 10), 0.0);
}

// --- the loop ---

fn tiny_options(task: Task, steps: u64) -> TrainOptions {
    TrainOptions { steps, d_model: 32, heads: 4, layers: 1, warmup: 50, eval_size: 200, ..TrainOptions::for_task(task) }
}

#[test]
fn one_batch_overfits_and_every_parameter_learns() {
    let _generator = common::generator();
    tch::manual_seed(0);
    let task = Task::Reverse;
    let config = Seq2SeqConfig { dropout: 0.0, ..tiny_options(task, 1).model_config() };
    let trained = TrainedModel::new(task, &config, Device::Cpu).unwrap();
    let mut rng = transformer_anatomy::training::data::Rng::new(5);
    let examples: Vec<_> = (0..8).map(|_| task.sample(&mut rng)).collect();
    let batch = Batch::new(&examples, &task.vocab(), task, Device::Cpu).unwrap();
    let mut opt = nn::Adam::default().build(&trained.vs, 3e-3).unwrap();
    let step_loss = |opt: &mut nn::Optimizer| {
        let log_probs = trained.model.forward(&batch.source, &batch.target_in, true);
        let loss = label_smoothed_loss(&log_probs, &batch.target_out, 0.0, PAD).cross_entropy;
        opt.zero_grad();
        loss.backward();
        loss
    };
    let first = step_loss(&mut opt);
    for (name, t) in trained.named_parameters() {
        let g = t.grad();
        assert!(g.defined() && g.abs().sum(Kind::Double).double_value(&[]) > 0.0, "{name} gets no gradient");
    }
    opt.step();
    let mut last = first.double_value(&[]);
    for _ in 0..300 {
        last = step_loss(&mut opt).double_value(&[]);
        opt.step();
    }
    assert!(first.double_value(&[]) > 2.0 && last < 0.05, "loss {} → {last}", first.double_value(&[]));
}

#[test]
fn a_seed_gives_the_same_loss_trace() {
    let _generator = common::generator();
    let options = tiny_options(Task::Copy, 12);
    let (_, a) = train(&options).unwrap();
    let (_, b) = train(&options).unwrap();
    assert_eq!(a.steps, b.steps);
    let (_, c) = train(&TrainOptions { seed: 2, ..options }).unwrap();
    assert_ne!(a.steps[0].loss, c.steps[0].loss);
    let trace: Vec<String> =
        a.steps.iter().map(|s| format!("step {:>2}  loss {:.4}  lr {:.6}", s.step, s.loss, s.lr)).collect();
    snapshot!("training_first_losses", trace.join("\n"));
}

/// A copy model trained here, once for the whole file, kept as its checkpoint's bytes: a test that needs
/// the file writes its own copy into its scratch folder.
fn copy_model_checkpoint() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let options = TrainOptions {
            d_model: 32,
            heads: 4,
            layers: 2,
            steps: 300,
            warmup: 100,
            eval_size: 200,
            ..TrainOptions::for_task(Task::Copy)
        };
        let (trained, report) = train(&options).unwrap();
        assert!(
            report.eval.exact_match >= 0.95,
            "exact match {} after {} steps",
            report.eval.exact_match,
            options.steps
        );
        let dir = common::TestDir::new("training-copy");
        save(&trained, &dir.join("copy.safetensors")).unwrap();
        std::fs::read(dir.join("copy.safetensors")).unwrap()
    })
}

/// The trained copy model's checkpoint, written into `dir`.
fn copy_model_file(dir: &Path) -> PathBuf {
    let path = dir.join("copy.safetensors");
    std::fs::write(&path, copy_model_checkpoint()).unwrap();
    path
}

/// The trained copy model, loaded from a checkpoint file as a user's would be.
fn trained_copy_model() -> TrainedModel {
    let dir = common::TestDir::new("training-load");
    load(&copy_model_file(&dir), Device::Cpu).unwrap()
}

#[test]
fn a_tiny_copy_model_learns_the_task() {
    let _generator = common::generator();
    let trained = trained_copy_model();
    let examples = Task::Copy.held_out(100, 99);
    let eval = transformer_anatomy::training::evaluate(&trained, &examples).unwrap();
    assert!(eval.exact_match >= 0.95 && eval.token_accuracy >= 0.98, "{eval:?}");
}

#[test]
fn save_and_load_give_identical_outputs() {
    let _generator = common::generator();
    let dir = common::TestDir::new("training-save-load");
    let a = load(&copy_model_file(&dir), Device::Cpu).unwrap();
    let copy = dir.join("copy-again.safetensors");
    save(&a, &copy).unwrap();
    let b = load(&copy, Device::Cpu).unwrap();
    assert_eq!(a.config, b.config);
    let source = Tensor::from_slice(&[5i64, 6, 7, 8, 9, 10, 11, 12, 13, 4]).view([1, 10]);
    let target = Tensor::from_slice(&[BOS, 5, 6, 7]).view([1, 4]);
    common::assert_close(&a.model.forward(&source, &target, false), &b.model.forward(&source, &target, false), 0.0);
}

#[test]
fn averaging_identical_checkpoints_is_the_identity() {
    let _generator = common::generator();
    tch::manual_seed(0);
    let trained = trained_copy_model();
    let params: Vec<Tensor> = trained.named_parameters().into_iter().map(|(_, t)| t.detach().copy()).collect();
    let copies = || params.iter().map(Tensor::copy).collect::<Vec<_>>();
    let averaged = average(&[copies(), copies(), copies()]).unwrap();
    for (a, p) in averaged.iter().zip(&params) {
        common::assert_close(a, p, 0.0);
    }
    // And of two different ones, the mean.
    let other: Vec<Tensor> = params.iter().map(|p| p.randn_like()).collect();
    let averaged = average(&[copies(), other.iter().map(Tensor::copy).collect()]).unwrap();
    common::assert_close(&averaged[0], &((&params[0] + &other[0]) / 2.0), 1e-6);
}

#[rstest]
#[case::missing("missing", "cannot read the checkpoint")]
#[case::truncated("truncated", "not a readable checkpoint")]
#[case::other_sizes("other_sizes", "has shape [")]
fn bad_checkpoints_are_clear_errors(#[case] kind: &str, #[case] expected: &str) {
    let _generator = common::generator();
    let dir = common::TestDir::new("training-bad-checkpoint");
    let good = copy_model_file(&dir);
    let path = dir.join(format!("bad-{kind}.safetensors"));
    match kind {
        "missing" => {}
        "truncated" => {
            let bytes = std::fs::read(good).unwrap();
            std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        }
        _ => {
            // The tensors of a d_model 32 model under the configuration of a d_model 64 one.
            let trained = load(&good, Device::Cpu).unwrap();
            let wider = Seq2SeqConfig { d_model: 64, d_ff: 256, ..trained.config.clone() };
            let impostor = TrainedModel { config: wider, ..trained };
            save(&impostor, &path).unwrap();
        }
    }
    let err = format!("{:#}", load(&path, Device::Cpu).unwrap_err());
    assert!(err.contains(expected), "expected {expected:?} in: {err}");
    if kind == "other_sizes" {
        assert!(err.contains("[64") && err.contains("[32") || err.contains(", 64]") && err.contains(", 32]"), "{err}");
    }
}

#[rstest]
#[case::steps(|o: &mut TrainOptions| o.steps = 0, "--steps")]
#[case::heads(|o: &mut TrainOptions| o.heads = 5, "not divisible by num_attention_heads 5")]
#[case::warmup(|o: &mut TrainOptions| o.warmup = 0, "--warmup")]
#[case::smoothing(|o: &mut TrainOptions| o.label_smoothing = 1.0, "--label-smoothing")]
#[case::negative_smoothing(|o: &mut TrainOptions| o.label_smoothing = -0.1, "--label-smoothing")]
fn bad_options_are_refused_before_training(#[case] change: fn(&mut TrainOptions), #[case] expected: &str) {
    let _generator = common::generator();
    let mut options = TrainOptions::for_task(Task::Copy);
    change(&mut options);
    let err = train(&options).unwrap_err().to_string();
    assert!(err.contains(expected), "expected {expected:?} in: {err}");
}

#[test]
fn unknown_tasks_and_words_are_named() {
    let _generator = common::generator();
    let err = Task::from_name("translate").unwrap_err().to_string();
    assert!(err.contains("copy, reverse, dates"), "{err}");
    let trained = trained_copy_model();
    let err = transformer_anatomy::training::encode_source(&trained, "1 2 x 3").unwrap_err().to_string();
    assert!(err.contains("\"x\"") && err.contains("copy"), "{err}");
}

// --- decoding ---

#[test]
fn the_cache_changes_nothing_but_the_speed() {
    let _generator = common::generator();
    let trained = trained_copy_model();
    let batch = Batch::new(&Task::Copy.held_out(20, 11), &Task::Copy.vocab(), Task::Copy, Device::Cpu).unwrap();
    let cached = greedy(&trained.model, &batch.source, BOS, EOS, 12, true).unwrap();
    let recomputed = greedy(&trained.model, &batch.source, BOS, EOS, 12, false).unwrap();
    assert_eq!(
        cached.iter().map(|d| &d.tokens).collect::<Vec<_>>(),
        recomputed.iter().map(|d| &d.tokens).collect::<Vec<_>>()
    );
    for (a, b) in cached.iter().zip(&recomputed) {
        assert!((a.log_prob - b.log_prob).abs() < 1e-4);
    }
    // Step by step, the two give the same distributions (not only the same argmax), here on random weights.
    tch::manual_seed(0);
    let vs = nn::VarStore::new(Device::Cpu);
    let model = EncoderDecoder::new(&vs, &Seq2SeqConfig { dropout: 0.0, ..Seq2SeqConfig::tiny(12, 12) }).unwrap();
    let source = Tensor::from_slice(&[4i64, 5, 6, 7, 0, 8, 9, 10, 11, 4]).view([2, 5]);
    let mut a = transformer_anatomy::decoding::StepDecoder::new(&model, &source, BOS, true);
    let mut b = transformer_anatomy::decoding::StepDecoder::new(&model, &source, BOS, false);
    for step in 0..6 {
        let (pa, pb) = (a.next_log_probs(), b.next_log_probs());
        common::assert_close(&pa, &pb, 1e-4);
        let next = Tensor::from_slice(&[3 + step, 9 - step]);
        a.push(&next);
        b.push(&next);
    }
}

/// Each decoding step runs in LibTorch's inference mode (src/inference_mode.rs) and leaves it on return:
/// what it hands back is an inference tensor, what the caller makes next is not, and the same model still
/// trains afterwards.
#[test]
fn decoding_steps_run_in_inference_mode_and_leave_it() {
    let _generator = common::generator();
    tch::manual_seed(0);
    let vs = nn::VarStore::new(Device::Cpu);
    let model = EncoderDecoder::new(&vs, &Seq2SeqConfig { dropout: 0.0, ..Seq2SeqConfig::tiny(12, 12) }).unwrap();
    let source = Tensor::from_slice(&[4i64, 5, 6, 7, 8]).view([1, 5]);
    for use_cache in [true, false] {
        let mut steps = transformer_anatomy::decoding::StepDecoder::new(&model, &source, BOS, use_cache);
        let log_probs = steps.next_log_probs();
        assert!(log_probs.is_inference() && !log_probs.requires_grad());
        assert!(!Tensor::zeros([1], (Kind::Float, Device::Cpu)).is_inference(), "the step left inference mode on");
    }
    let loss = model.forward(&source, &source, true).mean(Kind::Float);
    loss.backward();
    let grads = vs.trainable_variables().iter().filter(|v| v.grad().defined()).count();
    assert_eq!(grads, vs.trainable_variables().len(), "every parameter gets a gradient after decoding");
}

#[test]
fn beam_width_one_is_greedy_and_beams_are_sorted() {
    let _generator = common::generator();
    let trained = trained_copy_model();
    let examples = Task::Copy.held_out(10, 21);
    let batch = Batch::new(&examples, &Task::Copy.vocab(), Task::Copy, Device::Cpu).unwrap();
    let greedy_out = greedy(&trained.model, &batch.source, BOS, EOS, 12, true).unwrap();
    for (i, g) in greedy_out.iter().enumerate() {
        let source = batch.source.narrow(0, i as i64, 1);
        for use_cache in [true, false] {
            let options = BeamOptions { width: 1, length_penalty: 0.6, max_new_tokens: 12, use_cache };
            let best = &beam_search(&trained.model, &source, BOS, EOS, options).unwrap().hypotheses[0];
            assert_eq!(best.tokens, g.tokens);
            assert!((best.log_prob - g.log_prob).abs() < 1e-4);
        }
        let options = BeamOptions { width: 4, length_penalty: 0.6, max_new_tokens: 12, use_cache: true };
        let search = beam_search(&trained.model, &source, BOS, EOS, options).unwrap();
        let no_cache =
            beam_search(&trained.model, &source, BOS, EOS, BeamOptions { use_cache: false, ..options }).unwrap();
        assert_eq!(
            search.hypotheses.iter().map(|h| &h.tokens).collect::<Vec<_>>(),
            no_cache.hypotheses.iter().map(|h| &h.tokens).collect::<Vec<_>>()
        );
        assert!(search.hypotheses.windows(2).all(|w| w[0].score >= w[1].score));
        assert!(search.hypotheses.len() >= 4);
        // Every finished output has its end token in `ends`, at the step after its last token, with its
        // summed log-probability, and the end's parent is the beam holding that last token.
        for h in search.hypotheses.iter().filter(|h| h.finished) {
            let n = h.tokens.len();
            let end = search.ends[n].iter().find(|e| e.log_prob == h.log_prob).expect("the end is recorded");
            assert_eq!(end.token, EOS);
            if n > 0 {
                assert_eq!(search.steps[n - 1][end.parent].token, *h.tokens.last().unwrap());
            }
        }
        #[cfg(feature = "pictures")]
        if i == 0 {
            // The picture scales into a narrow output area instead of being cut off: it has a viewBox.
            let svg = transformer_anatomy::charts::beam_tree(&search, |id| id.to_string()).0;
            let open = &svg[..svg.find('>').unwrap()];
            let attr = |name: &str| open.split(&format!(" {name}=\"")).nth(1).unwrap().split('"').next().unwrap();
            assert_eq!(attr("viewBox"), format!("0 0 {} {}", attr("width"), attr("height")), "{open}");
            // The best output is drawn in blue to its `</s>`, one bold node per token and one for the end.
            let blue_nodes = svg.matches(r##"font-weight="bold" fill="#1d4ed8">"##).count();
            assert_eq!(blue_nodes, search.hypotheses[0].tokens.len() + 1, "{svg}");
            assert!(svg.contains(r##"font-weight="bold" fill="#1d4ed8">&lt;/s&gt;</text>"##), "{svg}");
            assert_eq!(svg.matches("&lt;/s&gt;</text>").count(), search.ends.iter().map(Vec::len).sum::<usize>());
            // Open beams in the last column are explained: dropped, or cut off by the length limit.
            if search.steps.last().is_some_and(|last| !last.is_empty()) {
                let said = match search.hypotheses.iter().any(|h| !h.finished) {
                    true => "The length limit ends the search",
                    false => "beams still open in the last column are dropped",
                };
                assert!(svg.contains(said), "the picture says why its open beams stop: {svg}");
            }
            // No text smaller than 12 px.
            assert!(!svg.contains("font-size=\"10\"") && !svg.contains("font-size=\"11\""));
        }
    }
}

/// Every output of up to `max_len` tokens (from the allowed ones) followed by `</s>`, scored from the
/// model's teacher-forced log-probabilities: what beam search must find when it can keep everything.
fn exhaustive_best(
    model: &EncoderDecoder,
    source: &Tensor,
    allowed: &[i64],
    max_len: usize,
    alpha: f64,
) -> (Vec<i64>, f64) {
    let mut prefixes: Vec<Vec<i64>> = vec![vec![]];
    let mut all = Vec::new();
    for _ in 0..=max_len {
        all.extend(prefixes.clone());
        prefixes = prefixes.iter().flat_map(|p| allowed.iter().map(move |&t| [&p[..], &[t]].concat())).collect();
    }
    let mut best = (Vec::new(), f64::NEG_INFINITY);
    for output in all {
        let target_in: Vec<i64> = std::iter::once(BOS).chain(output.iter().copied()).collect();
        let target_out: Vec<i64> = output.iter().copied().chain(std::iter::once(EOS)).collect();
        let log_probs = model.forward(source, &Tensor::from_slice(&target_in).view([1, -1]), false).get(0); // [t, V]
        let sum: f64 = target_out.iter().enumerate().map(|(i, &t)| log_probs.double_value(&[i as i64, t])).sum();
        let score = sum / length_penalty(target_out.len(), alpha);
        if score > best.1 {
            best = (output, score);
        }
    }
    best
}

#[rstest]
fn a_wide_beam_finds_the_exhaustive_best(#[values(0.0, 0.6, 2.0)] alpha: f64, #[values(1, 2)] seed: i64) {
    let _generator = common::generator();
    tch::manual_seed(seed);
    let _no_grad = tch::no_grad_guard();
    let vs = nn::VarStore::new(Device::Cpu);
    // Vocabulary: <pad> <s> </s> <unk> a b — the decoder may write </s>, <unk>, a and b.
    let model = EncoderDecoder::new(&vs, &Seq2SeqConfig { dropout: 0.0, ..Seq2SeqConfig::tiny(6, 6) }).unwrap();
    let source = Tensor::from_slice(&[4i64, 5, 4]).view([1, 3]);
    let (best, score) = exhaustive_best(&model, &source, &[3, 4, 5], 3, alpha);
    let options = BeamOptions { width: 64, length_penalty: alpha, max_new_tokens: 4, use_cache: true };
    let found = &beam_search(&model, &source, BOS, EOS, options).unwrap().hypotheses[0];
    assert!(found.finished);
    assert_eq!(found.tokens, best, "beam score {}, exhaustive {score}", found.score);
    assert!((found.score - score).abs() < 1e-4);
}

#[test]
fn a_beam_width_of_zero_is_refused() {
    let _generator = common::generator();
    let vs = nn::VarStore::new(Device::Cpu);
    let model = EncoderDecoder::new(&vs, &Seq2SeqConfig::tiny(6, 6)).unwrap();
    let options = BeamOptions { width: 0, length_penalty: 0.6, max_new_tokens: 4, use_cache: true };
    let err = beam_search(&model, &Tensor::from_slice(&[4i64]).view([1, 1]), BOS, EOS, options).unwrap_err();
    assert!(err.to_string().contains("at least 1"));
}
