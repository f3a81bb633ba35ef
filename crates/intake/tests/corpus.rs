//! The fuzzing harness's corpus, run in `cargo test`: every file of `fuzz/corpus/TARGET/` through that
//! target's entry point ([`anatomy_intake::harness`]), and every hostile or wrong file the project keeps
//! (`tests/hostile-class/`, `tests/exercise-mistakes/`, `tests/similarity-class/`, the solutions) through
//! the rules, where the instructors' copy has them. `make fuzz` grows the corpus; this replays it.
use std::path::{Path, PathBuf};

use anatomy_intake::harness::TARGETS;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files_below(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_below(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn every_corpus_file_passes_its_target() {
    let mut counted = Vec::new();
    for (target, run) in TARGETS {
        let mut files = Vec::new();
        files_below(&root().join("fuzz/corpus").join(target), &mut files);
        assert!(!files.is_empty(), "fuzz/corpus/{target}/ is empty: seed it (scripts/fuzz.sh seed)");
        for file in &files {
            run(&std::fs::read(file).unwrap());
        }
        counted.push(format!("{target} {}", files.len()));
    }
    eprintln!("corpus: {}", counted.join(", "));
}

#[test]
fn every_file_the_project_keeps_passes_the_rules() {
    let mut files = Vec::new();
    for dir in ["tests/hostile-class", "tests/exercise-mistakes", "tests/similarity-class", "solutions"] {
        files_below(&root().join(dir), &mut files);
    }
    files_below(&root().join("crates/course/src/stubs"), &mut files);
    for file in files.iter().filter(|f| f.extension().is_some_and(|x| x == "rs")) {
        anatomy_intake::harness::rules(&std::fs::read(file).unwrap());
    }
}
