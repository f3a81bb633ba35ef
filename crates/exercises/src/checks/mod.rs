//! The checks behind `anatomy exercises`. `checks::NAME` grades exercise NAME: it takes the student's
//! functions (as function pointers, so the same check grades a student's file, a solution or a wrong
//! answer) and returns `Err(message)` with what was expected and what came out, in words a student can
//! act on. Expected values come from independent computations — libtorch's own kernels, formulas in
//! `f64`, the crate's tested modules — and a result that equals a known mistake (softmax over the wrong
//! axis, `view` without `transpose`, …) is named as that mistake.
//!
//! The functions come as `&dyn Fn`, so that grading can run a check twice (see [`super::tape`]): beside
//! the student's code, where each call is recorded, and in the judge, where [`replayed`] hands the check
//! the recorded values instead. A check draws its inputs from LibTorch's generator, which the grader seeds
//! afresh for every grading run, so the expected outputs cannot be known in advance.
// A check takes the student's function as a `&dyn Fn` written out in full, so that the signature the
// student must match is read where the check is, not behind a type alias.
#![allow(clippy::type_complexity)]
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};

use tch::{Device, Kind, Tensor};

use transformer_anatomy::inspect::max_abs_diff;

mod attention;
mod decoder;
mod encoder;
mod gpt;
mod training;

pub use attention::{attention_head, scaled_dot_product, split_heads};
pub use decoder::{causal_mask, cross_attention, decoder_layer, sinusoidal_positions};
pub use encoder::{classifier_head, embeddings, feed_forward, layer_norm, mean_pooling};
pub use gpt::gpt_block;
pub use training::{beam_step, cached_attention, label_smoothed_loss, shift_right, warmup_schedule};

pub type CheckResult = Result<(), String>;

fn expect_shape(what: &str, t: &Tensor, expected: &[i64], advice: &str) -> CheckResult {
    if t.size() == expected {
        Ok(())
    } else {
        Err(format!("{what}: expected shape {expected:?}, got {:?}{advice}", t.size()))
    }
}

fn close(got: &Tensor, expected: &Tensor, tol: f64) -> bool {
    got.size() == expected.size() && {
        let diff = max_abs_diff(got, expected);
        diff <= tol && !diff.is_nan()
    }
}

fn expect_close(what: &str, got: &Tensor, expected: &Tensor, tol: f64, advice: &str) -> CheckResult {
    expect_shape(what, got, &expected.size(), "")?;
    let diff = max_abs_diff(got, expected);
    if diff <= tol && !diff.is_nan() {
        Ok(())
    } else {
        Err(format!("{what}: differs from the expected values by up to {diff:.3e} (allowed {tol:.0e}){advice}"))
    }
}

/// Like [`expect_close`], but a result equal to one of the known `mistakes` (what that mistake computes,
/// and the words naming it) fails with those words.
fn expect_close_or_name(
    what: &str,
    got: &Tensor,
    expected: &Tensor,
    tol: f64,
    mistakes: &[(Tensor, &str)],
) -> CheckResult {
    if close(got, expected, tol) {
        return Ok(());
    }
    if let Some((_, words)) = mistakes.iter().find(|(m, _)| close(got, m, tol)) {
        return Err(format!("{what}: {words}"));
    }
    expect_close(what, got, expected, tol, "")
}

fn expect_rows_sum_to_one(what: &str, weights: &Tensor) -> CheckResult {
    let sums = weights.sum_dim_intlist(-1, false, Kind::Double);
    expect_close(&format!("{what}: row sums"), &sums, &sums.ones_like(), 1e-5, ": every row of weights must sum to 1")
}

fn randn(shape: &[i64]) -> Tensor {
    Tensor::randn(shape, (Kind::Float, Device::Cpu))
}

/// The LibTorch error of `q.bmm(&k)` without the transpose, and what it means.
const TRANSPOSE: (&str, &str) = (
    "Expected size for first two dimensions",
    "the scores need q · kᵀ: transpose the keys' last two axes (`key.transpose(1, 2)`)",
);

/// Calls the student's code; a LibTorch error whose text contains one of the `known` needles fails with
/// that needle's advice. Anything else (a `todo!()` above all) goes on unwinding to the grader.
fn call<T>(f: impl FnOnce() -> T, known: &[(&str, &str)]) -> Result<T, String> {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => Ok(value),
        Err(payload) => {
            let text = super::panic_text(&*payload);
            match known.iter().find(|(needle, _)| text.contains(needle)) {
                Some((_, advice)) => Err(format!("{} — {advice}", super::tidy_panic(&text))),
                None => panic::resume_unwind(payload),
            }
        }
    }
}

/// Runs the check of exercise `name` with every student function replaced by the recorded values: the
/// judge's side of grading.
pub fn replayed(name: &str) -> CheckResult {
    use super::tape::replay as r;
    match name {
        "scaled_dot_product" => scaled_dot_product(&|_, _, _| r()),
        "attention_head" => attention_head(&|_, _| r()),
        "split_heads" => split_heads(&|_, _| r(), &|_| r()),
        "feed_forward" => feed_forward(&|_, _, _| r()),
        "layer_norm" => layer_norm(&|_, _, _, _| r()),
        "embeddings" => embeddings(&|_, _, _, _| r()),
        "classifier_head" => classifier_head(&|_, _| r()),
        "causal_mask" => causal_mask(&|_, _| r(), &|_, _| r()),
        "cross_attention" => cross_attention(&|_, _, _, _| r()),
        "decoder_layer" => decoder_layer(&|_, _, _, _, _| r()),
        "sinusoidal_positions" => sinusoidal_positions(&|_, _, _| r()),
        "shift_right" => shift_right(&|_, _, _| r()),
        "label_smoothed_loss" => label_smoothed_loss(&|_, _, _, _| r()),
        "warmup_schedule" => warmup_schedule(&|_, _, _| r()),
        "beam_step" => beam_step(&|_, _, _| r()),
        "cached_attention" => cached_attention(&|_, _, _, _, _| r()),
        "gpt_block" => gpt_block(&|_, _| r()),
        "mean_pooling" => mean_pooling(&|_, _| r()),
        other => Err(format!("no check is named {other}")),
    }
}

thread_local! {
    static PARTS: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

/// How many of the last check's independent parts passed, and how many it had (checks of one part: `None`).
pub fn take_parts() -> Option<(usize, usize)> {
    PARTS.with(|p| p.take())
}

/// Runs the independent parts of a check, every one of them, so that each earns its share of the points.
/// The first failure is the check's message; a check none of whose parts has been started is "not done".
fn parts(list: &[&dyn Fn() -> CheckResult]) -> CheckResult {
    let results: Vec<(super::Status, String)> = list.iter().map(super::run_check).collect();
    let passed = results.iter().filter(|(s, _)| *s == super::Status::Passed).count();
    PARTS.with(|p| p.set(Some((passed, list.len()))));
    if results.iter().all(|(s, _)| *s == super::Status::NotDone) {
        panic::panic_any(String::from("not yet implemented"));
    }
    match results.into_iter().find(|(s, _)| *s != super::Status::Passed) {
        None => Ok(()),
        Some((_, message)) => Err(message),
    }
}
