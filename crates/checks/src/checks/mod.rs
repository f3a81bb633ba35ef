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

use super::tape::{through_gate, Taped};

mod attention;
mod decoder;
mod encoder;
mod gpt;
mod training;

/// A wrong answer a check knows by name: the id the class report counts (the same as its example's file,
/// `tests/exercise-mistakes/EXERCISE/ID.rs`). Each exercise's table in `crates/course/exercises.toml`
/// declares its check's own, which its module holds as constants ([`CHECKS`]), and the check returns the
/// id with its message when it recognises one: no id is read back out of a message's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mistake(pub &'static str);

/// What a check says of a known wrong answer: the words, and the mistake's id when it is a named one
/// (advice for a slip the course does not count by name has none).
#[derive(Debug, Clone, Copy)]
pub struct Said {
    pub words: &'static str,
    pub mistake: Option<Mistake>,
}

/// Words for a named mistake.
const fn named(mistake: Mistake, words: &'static str) -> Said {
    Said { words, mistake: Some(mistake) }
}

/// Words for a slip that is told but not counted by name.
const fn told(words: &'static str) -> Said {
    Said { words, mistake: None }
}

/// A failed check: the message a student reads, and the named mistake it is, if the check knew it.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub message: String,
    pub mistake: Option<Mistake>,
}

impl Failure {
    fn named(mistake: Mistake, message: String) -> Self {
        Failure { message, mistake: Some(mistake) }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure { message, mistake: None }
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        message.to_string().into()
    }
}

pub type CheckResult = Result<(), Failure>;

fn expect_shape(what: &str, t: &Tensor, expected: &[i64], advice: &str) -> CheckResult {
    if t.size() == expected {
        Ok(())
    } else {
        Err(format!("{what}: expected shape {expected:?}, got {:?}{advice}", t.size()).into())
    }
}

/// The kinds a check reads as real numbers: `f32`, or `f64` for a student who computes in double precision.
pub(crate) const FLOATS: &[Kind] = &[Kind::Float, Kind::Double];
/// The kinds a check reads as ids or indices.
pub(crate) const INTEGERS: &[Kind] = &[Kind::Int64, Kind::Int];
/// The kinds a check reads as a 0/1 table (a mask): booleans, integers or real numbers.
pub(crate) const ZEROS_AND_ONES: &[Kind] =
    &[Kind::Bool, Kind::Uint8, Kind::Int8, Kind::Int16, Kind::Int, Kind::Int64, Kind::Float, Kind::Double];

/// What one tensor a student's function returns must be — its shape and the kinds the check reads — and
/// what to say of a wrong shape. [`call`] compares every returned tensor with it before the check reads a
/// single value, so that no call's shape or kind goes unchecked.
pub(crate) struct Returned<'a> {
    what: String,
    shape: Vec<i64>,
    kinds: &'static [Kind],
    advice: Box<dyn Fn(&[i64]) -> Said + 'a>,
}

impl<'a> Returned<'a> {
    pub(crate) fn new(what: impl Into<String>, shape: &[i64], kinds: &'static [Kind]) -> Self {
        Returned { what: what.into(), shape: shape.to_vec(), kinds, advice: Box::new(|_| told("")) }
    }

    /// `f32` (or `f64`) numbers of this shape.
    pub(crate) fn floats(what: impl Into<String>, shape: &[i64]) -> Self {
        Self::new(what, shape, FLOATS)
    }

    /// One `f64`: what a function returning a Rust `f64` gives.
    pub(crate) fn number(what: impl Into<String>) -> Self {
        Self::new(what, &[], &[Kind::Double])
    }

    /// The words after a wrong shape (": one row per query, …").
    pub(crate) fn told(self, words: &'static str) -> Self {
        self.said(told(words))
    }

    /// The words and named mistake of a wrong shape.
    pub(crate) fn said(self, said: Said) -> Self {
        Returned { advice: Box::new(move |_| said), ..self }
    }

    /// Words chosen from the shape that came back (a transposed shape names its own mistake).
    pub(crate) fn choose(self, advice: impl Fn(&[i64]) -> Said + 'a) -> Self {
        Returned { advice: Box::new(advice), ..self }
    }

    fn shape(&self, t: &Tensor) -> CheckResult {
        let got = t.size();
        if got == self.shape {
            return Ok(());
        }
        let said = (self.advice)(&got);
        let message = format!("{}: expected shape {:?}, got {got:?}{}", self.what, self.shape, said.words);
        Err(Failure { message, mistake: said.mistake })
    }

    fn kind(&self, t: &Tensor) -> CheckResult {
        let kind = t.kind();
        if self.kinds.contains(&kind) {
            return Ok(());
        }
        let read: Vec<String> = self.kinds.iter().map(|k| format!("{k:?}")).collect();
        Err(format!("{}: a tensor of kind {kind:?}; this check reads {}", self.what, read.join(" or ")).into())
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
        Err(format!("{what}: differs from the expected values by up to {diff:.3e} (allowed {tol:.0e}){advice}").into())
    }
}

/// Like [`expect_close`], but a result equal to one of the known wrong answers (what it computes, and what
/// the check says of it) fails with those words and that mistake's id.
fn expect_close_or_name(
    what: &str,
    got: &Tensor,
    expected: &Tensor,
    tol: f64,
    mistakes: &[(Tensor, Said)],
) -> CheckResult {
    if close(got, expected, tol) {
        return Ok(());
    }
    if let Some((_, said)) = mistakes.iter().find(|(m, _)| close(got, m, tol)) {
        return Err(Failure { message: format!("{what}: {}", said.words), mistake: said.mistake });
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

/// The keys not transposed, in the three attention checks that name it.
const KEYS_NOT_TRANSPOSED: Mistake = Mistake("keys_not_transposed");

/// The LibTorch error of `q.bmm(&k)` without the transpose, and what it means.
const TRANSPOSE: (&str, Said) = (
    "Expected size for first two dimensions",
    named(KEYS_NOT_TRANSPOSED, "the scores need q · kᵀ: transpose the keys' last two axes (`key.transpose(1, 2)`)"),
);

/// The LibTorch error of `masked_fill` handed a mask of numbers (the 0/1 mask as it comes), and its fix.
const BOOLEAN_MASK: (&str, Said) = (
    "masked_fill_ only supports boolean masks",
    told("`masked_fill` takes a boolean mask, true where a score is hidden: compare first, e.g. `mask.eq(0)`"),
);

/// LibTorch's error when two tensors do not broadcast because sizes `a` and `b` meet at `axis` (counted in
/// the longer one's axes), in both orders of the operands: a needle for [`call`] that only that pair of
/// sizes at that axis matches.
fn broadcast_error(a: i64, b: i64, axis: usize) -> [String; 2] {
    let text = |a, b| {
        format!("The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton dimension {axis}")
    };
    [text(a, b), text(b, a)]
}

/// The gate every answer of a student's function passes through: calls it, makes each returned tensor
/// canonical (by value: dense, contiguous, negation resolved, [`super::tape::canonical`]), and compares its
/// shape and kind with `returns`, in that order, before the check reads any value. A LibTorch error whose
/// text contains one of the `known` needles fails with what the check says of it (a needle is looked for
/// in that error's text, never in a message of ours; a student's own panic could imitate it). Anything
/// else (a `todo!()` above all) goes on unwinding. In the judge the gate is also the only way to a recorded
/// answer ([`super::tape::replay`]).
fn call<T: Taped>(f: impl FnOnce() -> T, returns: &[Returned], known: &[(&str, Said)]) -> Result<T, Failure> {
    let value = match panic::catch_unwind(AssertUnwindSafe(|| through_gate(f))) {
        Ok(value) => value,
        Err(payload) => {
            let text = super::panic_text(&*payload);
            return match known.iter().find(|(needle, _)| text.contains(needle)) {
                Some((_, said)) => Err(Failure {
                    message: format!("{} — {}", super::tidy_panic(&text), said.words),
                    mistake: said.mistake,
                }),
                None => panic::resume_unwind(payload),
            };
        }
    };
    let tensors = value.to_tensors();
    debug_assert_eq!(tensors.len(), returns.len(), "a check describes every tensor its function returns");
    let mut canonical = Vec::new();
    for (t, r) in tensors.iter().zip(returns) {
        canonical.push(super::tape::canonical(t).map_err(|why| Failure::from(format!("{}: {}", r.what, why.words())))?);
    }
    // Every shape, then every kind; of several wrong shapes, one that names a mistake says the most.
    let shapes: Vec<Failure> = canonical.iter().zip(returns).filter_map(|(t, r)| r.shape(t).err()).collect();
    if let Some(first) = shapes.iter().find(|f| f.mistake.is_some()).or(shapes.first()) {
        return Err(first.clone());
    }
    for (t, r) in canonical.iter().zip(returns) {
        r.kind(t)?;
    }
    Ok(T::from_tensors(canonical).expect("the same number of tensors"))
}

/// One exercise's check, declared once: the exercise it grades, how the judge runs it on recorded values
/// (every student function replaced by what the probe recorded, see [`super::tape`]), and the mistakes it
/// names. The class report's list of named mistakes ([`super::mistakes::NAMED`]) is read from here.
pub struct Check {
    pub exercise: &'static str,
    pub replay: fn() -> CheckResult,
    pub mistakes: &'static [Mistake],
}

// The checks' registry, written by `crates/checks/build.rs` from the course's declaration of its exercises
// (`crates/course/exercises.toml`): each check as `checks::NAME` (`MODULE::NAME`), which the probe's
// generated `main` and the homework notebook call, and `CHECKS`: each check with every student function
// replaced by the recorded values, and the mistakes it names (`MODULE::NAME_IN_CAPITALS`, which each
// module includes from the same file, `$OUT_DIR/mistakes_MODULE.rs`).
include!(concat!(env!("OUT_DIR"), "/checks.rs"));

/// Runs the check of exercise `name` with every student function replaced by the recorded values: the
/// judge's side of grading. A mistake the check names must be one it declares: the tests fail on one that
/// is not (a debug assertion), and a release-built grader counts it as unnamed rather than report an id
/// that has no words in [`crate::mistakes::NAMED`].
pub fn replayed(name: &str) -> CheckResult {
    let Some(check) = CHECKS.iter().find(|c| c.exercise == name) else {
        return Err(format!("no check is named {name}").into());
    };
    let mut result = (check.replay)();
    if let Err(Failure { mistake, .. }) = &mut result {
        if mistake.is_some_and(|m| !check.mistakes.contains(&m)) {
            debug_assert!(false, "{name} names {mistake:?}, which it does not declare");
            *mistake = None;
        }
    }
    result
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
    let results: Vec<super::Checked> = list.iter().map(super::run_check).collect();
    let passed = results.iter().filter(|c| c.status == anatomy_course::Status::Passed).count();
    PARTS.with(|p| p.set(Some((passed, list.len()))));
    if results.iter().all(|c| c.status == anatomy_course::Status::NotDone) {
        panic::panic_any(String::from("not yet implemented"));
    }
    match results.into_iter().find(|c| c.status != anatomy_course::Status::Passed) {
        None => Ok(()),
        Some(c) => Err(Failure { message: c.message, mistake: c.mistake }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SQUARE: Mistake = Mistake("square");

    /// What the gate says of one returned tensor described as `[2, 3]` floats.
    fn gate(answer: Tensor) -> Result<Tensor, Failure> {
        let returns = [Returned::floats("weights", &[2, 3]).choose(|got| {
            if got == [3, 3] {
                named(SQUARE, ": square")
            } else {
                told(": one row per query")
            }
        })];
        call(|| answer, &returns, &[])
    }

    #[test]
    fn the_gate_compares_shape_then_kind_before_any_value_and_reads_the_value_not_the_memory() {
        let right = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).view([2, 3]);
        // A negated view whose memory holds the right numbers is read as what it is, their negation.
        let read = gate(right.internal_neg_view()).unwrap();
        assert_eq!(max_abs_diff(&read, &-&right), 0.0);
        let wrong = gate(right.tr()).unwrap_err();
        assert_eq!(wrong.message, "weights: expected shape [2, 3], got [3, 2]: one row per query");
        assert_eq!(wrong.mistake, None);
        let square = gate(Tensor::zeros([3, 3], (Kind::Float, Device::Cpu))).unwrap_err();
        assert_eq!(square.mistake, Some(SQUARE), "the shape that came back chooses the words");
        // A 0-dim answer is a wrong shape, never a number compared with the expected ones.
        let scalar = gate(Tensor::from(0.0f32)).unwrap_err();
        assert!(scalar.message.contains("expected shape [2, 3], got []"), "{}", scalar.message);
        // Shape first: a wrong shape of the wrong kind is told its shape; the right shape its kind.
        let ints = Tensor::zeros([3, 2], (Kind::Int64, Device::Cpu));
        assert!(gate(ints).unwrap_err().message.contains("expected shape"));
        let ints = Tensor::zeros([2, 3], (Kind::Int64, Device::Cpu));
        assert_eq!(
            gate(ints).unwrap_err().message,
            "weights: a tensor of kind Int64; this check reads Float or Double"
        );
    }

    #[test]
    fn a_known_libtorch_error_is_named_and_a_students_own_panic_goes_on_unwinding() {
        let returns = [Returned::floats("scores", &[2, 2])];
        let (a, b) = (
            Tensor::zeros([2, 3, 4], (Kind::Float, Device::Cpu)),
            Tensor::zeros([2, 3, 4], (Kind::Float, Device::Cpu)),
        );
        let failure = call(|| a.bmm(&b), &returns, &[TRANSPOSE]).unwrap_err();
        assert_eq!(failure.mistake, Some(KEYS_NOT_TRANSPOSED));
        assert!(failure.message.starts_with("LibTorch: ") && failure.message.ends_with(TRANSPOSE.1.words));
        let todo =
            std::panic::catch_unwind(AssertUnwindSafe(|| call(|| -> Tensor { todo!() }, &returns, &[TRANSPOSE])));
        assert!(todo.is_err(), "a todo!() is not a check's failure: it is the stub, not done");
    }
}
