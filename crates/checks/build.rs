// The checks share the learner crate's build script: their tests link LibTorch with the rpath it records.
// Beside it, this one lists the course's own files for the in-process test of the checks
// (`tests/in_process.rs`): every reference solution, stub and wrong answer, read off the file system, so that
// no hand-written list can miss one. And it writes the checks' side of the course's declaration
// (`crates/course/exercises.toml`, read by `crates/course/declaration.rs`): the registry `CHECKS`, each
// check's named mistakes, and the in-process test's `check_with!`.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

// Each reader of the declaration uses some of its keys.
#[allow(dead_code)]
#[path = "../course/declaration.rs"]
mod declaration;

mod shared {
    include!("../../build.rs");

    pub(super) fn run() {
        main()
    }
}

fn main() {
    shared::run();
    exercise_files();
    declared_checks();
}

/// Writes, from the declaration, `$OUT_DIR/checks.rs` (`src/checks/mod.rs` includes it: each check as
/// `checks::NAME`, and `CHECKS`, each check with every student function replaced by the recorded values
/// and with the mistakes it names), `$OUT_DIR/mistakes_MODULE.rs` (each checks module includes its own:
/// the named mistakes of its checks, a constant each, `NO_EPS` for `no_eps`, and a list per check,
/// `MISTAKES_OF_NAME`) and
/// `$OUT_DIR/check_with.rs` (the in-process test's `check_with!`).
fn declared_checks() {
    for watched in ["../course/exercises.toml", "../course/declaration.rs"] {
        println!("cargo:rerun-if-changed={watched}");
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let declared = declaration::read(&manifest.join("../course/exercises.toml")).unwrap_or_else(|e| panic!("{e}"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    let write = |name: &str, text: String| {
        let header = "// Written by crates/checks/build.rs from crates/course/exercises.toml.\n";
        std::fs::write(out.join(name), header.to_string() + &text).unwrap_or_else(|e| panic!("{name}: {e}"));
    };
    let (mut uses, mut checks, mut glue) = (String::new(), String::new(), String::new());
    let mut modules: Vec<(&str, String, Vec<&str>)> = Vec::new();
    for e in &declared {
        let (name, module, list) = (&e.name, &e.check, format!("MISTAKES_OF_{}", declaration::upper(&e.name)));
        if !manifest.join(format!("src/checks/{module}.rs")).is_file() {
            panic!(
                "exercises.toml: the exercise {name:?} has its check in src/checks/{module}.rs, which does not exist"
            );
        }
        let functions = e.functions();
        let replayed: Vec<String> =
            functions.iter().map(|(_, a)| format!("&|{}| r()", vec!["_"; a.len()].join(", "))).collect();
        let called: Vec<String> =
            functions.iter().map(|(f, a)| format!("&|{args}| $($m)::+::{f}({args})", args = a.join(", "))).collect();
        writeln!(uses, "pub use {module}::{name};").unwrap();
        writeln!(
            checks,
            "        Check {{ exercise: {name:?}, replay: || {module}::{name}({}), mistakes: {module}::{list} }},",
            replayed.join(", ")
        )
        .unwrap();
        writeln!(
            glue,
            "    ({name}, $($m:ident)::+) => {{\n        \
             Some((|| checks::{name}({})) as fn() -> CheckResult)\n    }};",
            called.join(", ")
        )
        .unwrap();
        let at = match modules.iter().position(|(m, _, _)| m == module) {
            Some(at) => at,
            None => {
                modules.push((module, String::new(), Vec::new()));
                modules.len() - 1
            }
        };
        let (_, text, ids) = &mut modules[at];
        let consts: Vec<String> = e.mistakes.iter().map(|m| declaration::upper(m)).collect();
        writeln!(
            text,
            "/// The named mistakes of `{name}`.\npub(super) const {list}: &[super::Mistake] = &[{}];",
            consts.join(", ")
        )
        .unwrap();
        ids.extend(e.mistakes.iter().map(String::as_str));
    }
    for (module, mut text, mut ids) in modules {
        ids.sort();
        ids.dedup();
        for id in ids {
            writeln!(text, "const {}: super::Mistake = super::Mistake({id:?});", declaration::upper(id)).unwrap();
        }
        write(&format!("mistakes_{module}.rs"), text);
    }
    write(
        "checks.rs",
        format!(
            "{uses}\n/// Every check, in course order (the order of [`crate::EXERCISES`]).\n\
             pub const CHECKS: &[Check] = {{\n    use super::tape::replay as r;\n    &[\n{checks}    ]\n}};\n"
        ),
    );
    write(
        "check_with.rs",
        format!(
            "macro_rules! check_with {{\n{glue}    ($other:ident, $($m:ident)::+) => {{\n        None\n    }};\n}}\n"
        ),
    );
}

/// Writes `$OUT_DIR/exercise_files.rs`: one call of the macro `exercise_files!` (the test declares it) with
/// the solutions (`solutions/NAME.rs`), the stubs (`crates/course/src/stubs/NAME.rs`) and the wrong answers
/// (`tests/exercise-mistakes/EXERCISE/ID.rs`, by exercise), each as its name and its path. A students' copy
/// has neither solutions nor wrong answers: their lists are empty.
fn exercise_files() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest.ancestors().find(|d| d.join("grader").is_dir()).unwrap_or(&manifest).to_path_buf();
    let (stubs, mistakes) = (root.join("crates/course/src/stubs"), root.join("tests/exercise-mistakes"));
    // The shared script watches solutions/; a folder that does not exist is not watched (cargo would count
    // it as changed on every build). Cargo scans a watched folder whole: an added, removed or edited file
    // reruns this script, and then rebuilds this crate and those above it, as an edited solution does.
    for dir in [&stubs, &mistakes] {
        if dir.is_dir() {
            println!("cargo:rerun-if-changed={}", dir.display());
        }
    }
    let mut bad = Vec::new();
    let solutions = files(&root.join("solutions"), &mut bad).join(", ");
    let stubs = files(&stubs, &mut bad).join(", ");
    let mut by_exercise = Vec::new();
    for (name, dir) in entries(&mistakes).into_iter().filter(|(_, p)| p.is_dir()) {
        if is_ident(&name) {
            by_exercise.push(format!("{name} [{}]", files(&dir, &mut bad).join(", ")));
        } else {
            bad.push(dir);
        }
    }
    let mut text = String::from("// Written by crates/checks/build.rs, from the file system.\n");
    for path in bad {
        let why = format!("{}: its name is not a module's name (lower-case letters, digits, `_`)", path.display());
        writeln!(text, "compile_error!({why:?});").unwrap();
    }
    writeln!(text, "exercise_files! {{\n    solutions: [{solutions}],\n    stubs: [{stubs}],").unwrap();
    writeln!(text, "    wrong_answers: [{}],\n}}", by_exercise.join(", ")).unwrap();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it")).join("exercise_files.rs");
    std::fs::write(&out, text).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}

/// The entries of `dir` (none if it does not exist), by name.
fn entries(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    found.sort();
    found
}

/// The `.rs` files of `dir`, each as `NAME "PATH"`; one whose name cannot be a module's goes to `bad`.
fn files(dir: &Path, bad: &mut Vec<PathBuf>) -> Vec<String> {
    let mut found = Vec::new();
    for (name, path) in entries(dir) {
        let Some(stem) = name.strip_suffix(".rs").filter(|_| path.is_file()) else { continue };
        match path.to_str() {
            Some(text) if is_ident(stem) => found.push(format!("{stem} {text:?}")),
            _ => bad.push(path),
        }
    }
    found
}

/// Whether a file's or folder's name can be the module it becomes (a name that cannot stops the test's
/// build with a message that names the file).
fn is_ident(name: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
        "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
        "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract", "become",
        "box", "do", "final", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
    ];
    name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && name.bytes().next().is_some_and(|b| b.is_ascii_lowercase() || b == b'_')
        && name != "_"
        && !KEYWORDS.contains(&name)
}
