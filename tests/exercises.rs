//! Tests of the exercise checks: the reference solutions pass, the untouched stubs are "not done", and
//! plausible wrong answers fail with a message (never pass, never crash the grader).
//!
//! These are the instructors' tests: they run where `solutions/` exists. In a student's copy (without
//! it) this file compiles to nothing, and completed exercises do not turn into failing tests.
#![cfg(anatomy_solutions)]
mod common;

use std::process::Command;

use tch::nn::Module;
use tch::{Device, Kind, Tensor};
use transformer_anatomy::exercises::checks::{self, CheckResult};
use transformer_anatomy::exercises::support::{DecoderLayerParts, Projections};
use transformer_anatomy::exercises::{self, run_check, Status};

fn assert_fails(check: impl FnOnce() -> CheckResult, expected_words: &str) {
    let outcome = run_check("wrong answer", check);
    assert_eq!(outcome.status, Status::Failed, "a wrong answer was graded {:?}: {}", outcome.status, outcome.message);
    assert!(outcome.message.contains(expected_words), "expected {expected_words:?} in: {}", outcome.message);
}

#[test]
fn every_reference_solution_passes() {
    for e in exercises::all() {
        let outcome = e.check(true);
        assert_eq!(outcome.status, Status::Passed, "{}: {}", e.name, outcome.message);
    }
}

#[test]
fn every_untouched_stub_is_not_done() {
    for e in exercises::all() {
        let outcome = e.check(false);
        assert_eq!(outcome.status, Status::NotDone, "{}: {}", e.name, outcome.message);
        assert!(outcome.message.starts_with("not done yet"), "{}", outcome.message);
    }
}

// --- exercise 1: causal mask ---

fn upper_triangle(n: i64, device: Device) -> Tensor {
    Tensor::ones([n, n], (Kind::Float, device)).triu(0)
}
fn no_diagonal(n: i64, device: Device) -> Tensor {
    Tensor::ones([n, n], (Kind::Float, device)).tril(-1)
}
fn right_mask(n: i64, device: Device) -> Tensor {
    Tensor::ones([n, n], (Kind::Float, device)).tril(0)
}
fn mask_ignored(scores: &Tensor, _mask: &Tensor) -> Tensor {
    scores.softmax(-1, Kind::Float)
}
fn mask_multiplied(scores: &Tensor, mask: &Tensor) -> Tensor {
    (scores * mask).softmax(-1, Kind::Float)
}
fn right_softmax(scores: &Tensor, mask: &Tensor) -> Tensor {
    scores.masked_fill(&mask.eq(0), f64::NEG_INFINITY).softmax(-1, Kind::Float)
}

#[test]
fn wrong_causal_masks_fail() {
    let imp = |causal_mask, masked_softmax| checks::CausalMaskImpl { causal_mask, masked_softmax };
    assert_fails(|| checks::check_causal_mask(&imp(upper_triangle, right_softmax)), "the diagonal included");
    assert_fails(|| checks::check_causal_mask(&imp(no_diagonal, right_softmax)), "the diagonal included");
    assert_fails(|| checks::check_causal_mask(&imp(right_mask, mask_ignored)), "must be exactly 0");
    assert_fails(|| checks::check_causal_mask(&imp(right_mask, mask_multiplied)), "a score of 0 still gets weight");
}

// --- exercise 2: cross-attention ---

fn attention(q: &Tensor, k: &Tensor, v: &Tensor, scale: f64, padding: Option<&Tensor>) -> (Tensor, Tensor) {
    let mut scores = q.bmm(&k.transpose(1, 2)) / scale;
    if let Some(p) = padding {
        scores = scores.masked_fill(&p.eq(0).unsqueeze(1), f64::NEG_INFINITY);
    }
    let weights = scores.softmax(-1, Kind::Float);
    (weights.bmm(v), weights)
}
fn swapped_queries_and_keys(dec: &Tensor, enc: &Tensor, p: &Projections, padding: Option<&Tensor>) -> (Tensor, Tensor) {
    let (q, k, v) = (p.query.forward(enc), p.key.forward(dec), p.value.forward(dec));
    attention(&q, &k, &v, 8f64.sqrt(), padding)
}
fn padding_ignored(dec: &Tensor, enc: &Tensor, p: &Projections, _padding: Option<&Tensor>) -> (Tensor, Tensor) {
    attention(&p.query.forward(dec), &p.key.forward(enc), &p.value.forward(enc), 8f64.sqrt(), None)
}
fn scaled_by_d_not_root_d(dec: &Tensor, enc: &Tensor, p: &Projections, padding: Option<&Tensor>) -> (Tensor, Tensor) {
    attention(&p.query.forward(dec), &p.key.forward(enc), &p.value.forward(enc), 8.0, padding)
}
fn self_attention_instead(dec: &Tensor, _enc: &Tensor, p: &Projections, padding: Option<&Tensor>) -> (Tensor, Tensor) {
    // Keys and values from the decoder: fine shapes only when t == s; the padding mask then breaks it.
    attention(&p.query.forward(dec), &p.key.forward(dec), &p.value.forward(dec), 8f64.sqrt(), padding)
}

fn keys_not_transposed(dec: &Tensor, enc: &Tensor, p: &Projections, _padding: Option<&Tensor>) -> (Tensor, Tensor) {
    let weights = p.query.forward(dec).bmm(&p.key.forward(enc)).softmax(-1, Kind::Float);
    (weights.bmm(&p.value.forward(enc)), weights)
}

#[test]
fn wrong_cross_attentions_fail() {
    let check = |f| move || checks::check_cross_attention(&checks::CrossAttentionImpl { cross_attention: f });
    assert_fails(check(swapped_queries_and_keys), "one row per target position");
    assert_fails(check(padding_ignored), "padded source position");
    assert_fails(check(scaled_by_d_not_root_d), "√head_dim");
    assert_fails(check(self_attention_instead), "one row per target position");
    // A LibTorch error inside the student's code is reported by its first line, not as a C++ stack.
    assert_fails(check(keys_not_transposed), "panicked: LibTorch: Expected size for first two dimensions");
}

// --- exercise 3: decoder layer ---

use transformer_anatomy::{Attention, FusedMultiHeadAttention};

/// Self-attention of the decoder states `h` (the same tensor gives queries, keys and values).
fn self_attend(a: &FusedMultiHeadAttention, h: &Tensor, mask: Option<&Tensor>) -> Tensor {
    a.forward(h, h, mask, false).output
}
/// Queries from `h`, keys and values from `memory`.
fn cross_attend(a: &FusedMultiHeadAttention, h: &Tensor, memory: &Tensor, mask: Option<&Tensor>) -> Tensor {
    a.forward(h, memory, mask, false).output
}

fn no_target_mask(x: &Tensor, memory: &Tensor, p: &DecoderLayerParts, _t: &Tensor, s: Option<&Tensor>) -> Tensor {
    let x = x + self_attend(p.self_attention, &p.norm_1.forward(x), None);
    let x = &x + cross_attend(p.cross_attention, &p.norm_2.forward(&x), memory, s);
    &x + p.feed_forward.forward(&p.norm_3.forward(&x))
}
fn cross_attention_forgotten(
    x: &Tensor,
    _m: &Tensor,
    p: &DecoderLayerParts,
    t: &Tensor,
    _s: Option<&Tensor>,
) -> Tensor {
    let x = x + self_attend(p.self_attention, &p.norm_1.forward(x), Some(t));
    &x + p.feed_forward.forward(&p.norm_3.forward(&x))
}
fn post_layer_norm(x: &Tensor, memory: &Tensor, p: &DecoderLayerParts, t: &Tensor, s: Option<&Tensor>) -> Tensor {
    let x = p.norm_1.forward(&(x + self_attend(p.self_attention, x, Some(t))));
    let x = p.norm_2.forward(&(&x + cross_attend(p.cross_attention, &x, memory, s)));
    p.norm_3.forward(&(&x + p.feed_forward.forward(&x)))
}
fn no_skip_connections(x: &Tensor, memory: &Tensor, p: &DecoderLayerParts, t: &Tensor, s: Option<&Tensor>) -> Tensor {
    let x = self_attend(p.self_attention, &p.norm_1.forward(x), Some(t));
    let x = cross_attend(p.cross_attention, &p.norm_2.forward(&x), memory, s);
    p.feed_forward.forward(&p.norm_3.forward(&x))
}

#[test]
fn wrong_decoder_layers_fail() {
    let check = |f| move || checks::check_decoder_layer(&checks::DecoderLayerImpl { decoder_layer: f });
    assert_fails(check(no_target_mask), "must get the target mask");
    assert_fails(check(cross_attention_forgotten), "does not depend on the encoder output");
    assert_fails(check(post_layer_norm), "x + sublayer(norm(x))");
    assert_fails(check(no_skip_connections), "x + sublayer(norm(x))");
}

// --- exercise 4: sinusoidal positions ---

fn table(
    max_len: i64,
    d: i64,
    device: Device,
    exponent: impl Fn(&Tensor) -> Tensor,
    swap: bool,
    halves: bool,
) -> Tensor {
    let pos = Tensor::arange(max_len, (Kind::Float, device)).unsqueeze(1);
    let idx = Tensor::arange(d / 2, (Kind::Float, device));
    let angle = pos * (exponent(&idx) * (-(10000f64.ln()) / d as f64)).exp();
    let (a, b) = if swap { (angle.cos(), angle.sin()) } else { (angle.sin(), angle.cos()) };
    if halves {
        Tensor::cat(&[a, b], 1)
    } else {
        Tensor::stack(&[a, b], -1).view([max_len, d])
    }
}
fn sin_cos_swapped(m: i64, d: i64, dev: Device) -> Tensor {
    table(m, d, dev, |i| i * 2.0, true, false)
}
fn i_instead_of_2i(m: i64, d: i64, dev: Device) -> Tensor {
    table(m, d, dev, |i| i.shallow_clone(), false, false)
}
fn halves_not_interleaved(m: i64, d: i64, dev: Device) -> Tensor {
    table(m, d, dev, |i| i * 2.0, false, true)
}
fn right_table(m: i64, d: i64, dev: Device) -> Tensor {
    table(m, d, dev, |i| i * 2.0, false, false)
}

#[test]
fn wrong_positional_encodings_fail() {
    let check = |f| move || checks::check_sinusoidal_positions(&checks::SinusoidalImpl { sinusoidal_positions: f });
    assert_fails(check(sin_cos_swapped), "even columns hold sines");
    assert_fails(check(i_instead_of_2i), "even columns hold sines");
    assert_fails(check(halves_not_interleaved), "interleaved");
    // The helper itself is right: the failures above come from the deliberate mistakes.
    assert_eq!(run_check("right", check(right_table)).status, Status::Passed);
}

// --- the grader from the command line ---

fn anatomy(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_anatomy")).args(args).output().unwrap()
}

#[test]
fn the_grader_reports_stubs_as_not_done_with_exit_code_1() {
    let o = anatomy(&["exercises", "check", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["passed"], 0);
    assert_eq!(v["total"], 4);
    let statuses: Vec<&str> =
        v["exercises"].as_array().unwrap().iter().map(|e| e["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["not_done"; 4]);
    assert!(o.stderr.is_empty(), "the grader must not print panics: {}", String::from_utf8_lossy(&o.stderr));

    let text = String::from_utf8_lossy(&anatomy(&["exercises", "check"]).stdout).into_owned();
    assert!(text.contains("next: causal_mask") && text.contains("exercises/hints/causal_mask.md"), "{text}");
}

#[test]
fn the_grader_passes_the_solutions_and_checks_one_exercise_by_name() {
    let o = anatomy(&["exercises", "check", "--solutions"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stdout).contains("4 of 4 reference solutions passed"));
    let o = anatomy(&["exercises", "check", "--solutions", "--json", "cross_attention"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["passed"].as_u64(), v["total"].as_u64()), (Some(1), Some(1)));
    let o = anatomy(&["exercises", "check", "no_such_exercise"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("choose one of causal_mask, cross_attention"));
}
