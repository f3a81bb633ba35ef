//! Helpers shared by the test files (one file per chapter section).
#![allow(dead_code)]
pub mod html;
pub mod test_dir;

#[allow(unused_imports)] // not every test file makes folders
pub use test_dir::TestDir;

use tch::{Kind, Tensor};
use transformer_anatomy::{model_dir::resolve_model_dir, Tokenizer};

static GENERATOR: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// LibTorch's one random number generator, for this test alone while the guard lives: plain `cargo test`
/// runs the tests of a file on several threads, and another test's draws would shift this one's.
#[must_use = "the generator is shared only while the guard lives"]
pub fn generator() -> std::sync::MutexGuard<'static, ()> {
    GENERATOR.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Fixes LibTorch's random number generator, so a test draws the same "random" weights and inputs on
/// every run; the guard keeps other tests of the file from drawing until this one ends.
#[must_use = "the seed holds only while the guard lives"]
pub fn seed() -> std::sync::MutexGuard<'static, ()> {
    let guard = generator();
    tch::manual_seed(0);
    guard
}

/// The tokenizer of the model folder that `make setup` fills.
pub fn tokenizer() -> Tokenizer {
    let dir = resolve_model_dir(None).expect("the model folder is missing: run `make setup`");
    Tokenizer::from_model_dir(dir).expect("the model folder's tokenizer.json loads")
}

/// The largest absolute difference between two tensors of the same shape.
pub fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
    assert_eq!(a.size(), b.size(), "shapes differ");
    (a - b).abs().max().to_kind(Kind::Double).double_value(&[])
}

/// Fails with both shapes and the largest difference when `a` and `b` differ by more than `tol`.
pub fn assert_close(a: &Tensor, b: &Tensor, tol: f64) {
    let diff = max_abs_diff(a, b);
    assert!(diff <= tol, "max |a - b| = {diff:e} exceeds {tol:e} (shape {:?})", a.size());
}

/// Snapshots go to the top-level `snapshots/` folder, named after the test file and the name given.
#[macro_export]
macro_rules! snapshot {
    ($name:expr, $value:expr) => {
        insta::with_settings!({ snapshot_path => "../snapshots", omit_expression => true }, {
            insta::assert_snapshot!($name, $value);
        })
    };
}
