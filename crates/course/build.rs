// The project's root, for the exercise files' paths: the folder that holds grader/, found as the workspace's
// shared build script (../../build.rs) finds it. This crate has no LibTorch, so it does not use that script.
//
// And the exercise list: `$OUT_DIR/exercises.rs`, `EXERCISES` written from the declaration
// (`exercises.toml`, read by `declaration.rs`), which `src/lib.rs` includes. Watched by paths relative to
// this package, so that the watch does not depend on where the checkout lies (../../build.rs says why).
use std::fmt::Write as _;
use std::path::PathBuf;

// Each reader of the declaration uses some of its keys (the checks' build script the rest).
#[allow(dead_code)]
mod declaration;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest.ancestors().find(|d| d.join("grader").is_dir()).unwrap_or(&manifest).to_path_buf();
    println!("cargo:rustc-env=ANATOMY_PROJECT_ROOT={}", root.display());
    for watched in ["build.rs", "declaration.rs", "exercises.toml", "src/forbidden.rs"] {
        println!("cargo:rerun-if-changed={watched}");
    }
    let declared = declaration::read(&manifest.join("exercises.toml")).unwrap_or_else(|e| panic!("{e}"));
    let forbidden = std::fs::read_to_string(manifest.join("src/forbidden.rs")).expect("src/forbidden.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it")).join("exercises.rs");
    std::fs::write(&out, exercise_list(&declared, &forbidden)).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}

/// `EXERCISES`, one `Exercise` per table, with its stub and hints compiled in.
fn exercise_list(declared: &[declaration::Declared], forbidden: &str) -> String {
    let mut text = String::from(
        "// Written by crates/course/build.rs from crates/course/exercises.toml.\n\
         /// Every exercise, in the order to do them (`crates/course/exercises.toml` declares them).\n\
         pub const EXERCISES: &[Exercise] = &[\n",
    );
    for e in declared {
        let functions: Vec<String> = e.functions().iter().map(|(f, args)| format!("({f:?}, {})", args.len())).collect();
        let forbids: Vec<String> = e
            .forbids
            .iter()
            .map(|f| {
                let family = declaration::upper(f);
                if !forbidden.contains(&format!("pub const {family}: Forbidden")) {
                    panic!(
                        "exercises.toml: the exercise {:?} forbids {f:?}, which src/forbidden.rs does not declare",
                        e.name
                    );
                }
                format!("&forbidden::{family}")
            })
            .collect();
        let file = |path: String| format!("include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {path:?}))");
        writeln!(
            text,
            "    Exercise {{\n        name: {name:?},\n        summary: {summary:?},\n        chapter: {chapter:?},\n        \
             homework: {homework},\n        functions: &[{functions}],\n        stub: {stub},\n        hints: {hints},\n        \
             uses: &{uses:?},\n        forbids: &[{forbids}],\n        points: {points:?},\n    }},",
            name = e.name,
            summary = e.summary,
            chapter = e.chapter,
            homework = e.homework,
            functions = functions.join(", "),
            stub = file(format!("/src/stubs/{}.rs", e.name)),
            hints = file(format!("/../../exercises/hints/{}.md", e.name)),
            uses = e.uses,
            forbids = forbids.join(", "),
            points = e.points,
        )
        .unwrap();
    }
    text + "];\n"
}
