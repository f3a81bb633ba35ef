//! One seed, one set of numbers on every device: a GPU has a random generator of its own, which gives
//! other numbers for the same seed than the CPU's. So every random draw whose values a chapter, the tour
//! or a notebook prints (a model's starting weights, a random input, a sampled character, a shuffled
//! order) is made on the CPU's generator and then moved to the model's device: through `src/init.rs`, or
//! by a call that names `Device::Cpu` itself. Dropout is the one exception, and it is deliberate: its
//! masks are drawn on the device at every training step (a copy from the CPU per dropout would slow
//! training on a GPU for numbers no chapter prints), so a training run's losses on a GPU differ from the
//! CPU's beyond float rounding (docs/learners.md, *Running on a GPU*).
//!
//! Without a GPU the numbers cannot be compared here (`make test-gpu` does that on a GPU machine); this
//! test holds the code to the rule instead, reading the source as Rust (syn), and shows on a made-up
//! file that it finds a draw on the model's device.
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};

/// tch's calls that draw random numbers (free functions and methods alike).
const DRAWS: &[&str] = &[
    "randn",
    "rand",
    "randint",
    "randint_low",
    "randperm",
    "randn_like",
    "rand_like",
    "randint_like",
    "normal",
    "normal_",
    "uniform_",
    "random_",
    "bernoulli",
    "bernoulli_",
    "multinomial",
    "exponential_",
    "geometric_",
    "cauchy_",
    "log_normal_",
];

/// tch's layer constructors that draw their weights on the path's device.
const DRAWING_CONSTRUCTORS: &[&str] = &["linear", "embedding", "conv1d", "conv2d", "conv3d", "lstm", "gru", "rnn"];

/// The one file allowed to draw with a device given to it: it draws on the CPU, then copies.
const INIT: &str = "src/init.rs";

struct Finder {
    file: String,
    found: Vec<String>,
}

fn names_the_cpu(tokens: &impl quote::ToTokens) -> bool {
    let text = tokens.to_token_stream().to_string();
    text.contains("Device :: Cpu")
}

impl Finder {
    fn refuse(&mut self, what: &str, span_text: String) {
        self.found.push(format!("{}: {what} in `{span_text}`", self.file));
    }
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(path) = &*call.func {
            let segments: Vec<String> = path.path.segments.iter().map(|s| s.ident.to_string()).collect();
            let last = segments.last().map(String::as_str).unwrap_or("");
            let from_tensor = segments.len() >= 2 && segments[segments.len() - 2] == "Tensor";
            if from_tensor && DRAWS.contains(&last) && !names_the_cpu(&call.args) {
                self.refuse(&format!("Tensor::{last} without Device::Cpu"), quote::quote!(#call).to_string());
            }
            let from_nn = segments.len() >= 2 && segments[segments.len() - 2] == "nn";
            if from_nn && DRAWING_CONSTRUCTORS.contains(&last) && self.file != INIT {
                self.refuse(
                    &format!("nn::{last}, which draws on the model's device"),
                    quote::quote!(#call).to_string(),
                );
            }
        }
        visit::visit_expr_call(self, call);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let method = call.method.to_string();
        // A method draw on a tensor: on the CPU only if the tensor was put there in the same expression.
        if DRAWS.contains(&method.as_str()) && self.file != INIT && !names_the_cpu(&call.receiver) {
            self.refuse(&format!(".{method}() on a tensor not moved to the CPU"), quote::quote!(#call).to_string());
        }
        visit::visit_expr_method_call(self, call);
    }
}

fn draws_off_the_cpu(file: &str, source: &str) -> Vec<String> {
    let syntax = syn::parse_file(source).unwrap_or_else(|e| panic!("{file} does not parse: {e}"));
    let mut finder = Finder { file: file.to_string(), found: Vec::new() };
    finder.visit_file(&syntax);
    finder.found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// What runs a model on a device: the learner's crate and the tour and bench. (The exercises' checks run
/// on the CPU only, and draw there.)
#[test]
fn every_random_draw_a_chapter_prints_is_made_on_the_cpus_generator() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "crates/tools/src"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 40, "found only {} files", files.len());
    let mut found = Vec::new();
    for path in files {
        let file = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        found.extend(draws_off_the_cpu(&file, &std::fs::read_to_string(&path).unwrap()));
    }
    assert!(
        found.is_empty(),
        "random draws on a model's device (draw on the CPU, then move: src/init.rs):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_draw_on_the_models_device_is_found_however_it_is_written() {
    let made_up = r#"
        fn build(p: &nn::Path, device: Device, x: &Tensor) {
            let input = Tensor::randn([1, 5, 8], (Kind::Float, device));
            let layer = nn::linear(p / "dense", 8, 8, Default::default());
            let order = tch::Tensor::randperm(10, (Kind::Int64, x.device()));
            let next = x.softmax(0, Kind::Float).multinomial(1, false);
            let fine = Tensor::randn([2], (Kind::Float, Device::Cpu)).to_device(device);
            let also_fine = x.to_device(tch::Device::Cpu).multinomial(1, false);
        }
    "#;
    let found = draws_off_the_cpu("made-up.rs", made_up);
    assert_eq!(found.len(), 4, "{found:#?}");
    for (finding, what) in found.iter().zip(["Tensor::randn", "nn::linear", "Tensor::randperm", ".multinomial()"]) {
        assert!(finding.contains(what), "{finding} should name {what}");
    }
}
