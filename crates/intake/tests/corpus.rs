//! The fuzzing harness's corpus, run in `cargo test`: every file of `fuzz/corpus/TARGET/` through that
//! target's entry point ([`anatomy_intake::harness`]), and every file the project keeps of the course
//! through the rules, each as its exercise reads it: the honest ones (the solutions, the stubs, the wrong
//! answers of `tests/exercise-mistakes/`, `tests/honest-styles/`, `tests/similarity-class/`) must be
//! allowed, and each of `tests/hostile-class/` the rules refuse must be refused with the words of its
//! `expect:` line. `make fuzz` grows the corpus; this replays it. This file is kept back from the
//! students' copy (`exercises/kept-back`) with those folders: here they all exist, and a missing one fails.
use std::path::{Path, PathBuf};

use anatomy_course::{Exercise, EXERCISES};
use anatomy_intake::harness::TARGETS;
use anatomy_intake::rules::{check, Verdict};

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

/// The `.rs` files below `dir` (a folder of the project's root), sorted; a folder that is missing or
/// holds none fails the test, naming it.
fn kept_files(dir: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    files_below(&root().join(dir), &mut files);
    files.retain(|f| f.extension().is_some_and(|x| x == "rs"));
    files.sort();
    assert!(
        !files.is_empty(),
        "{dir}/ is missing or holds no .rs file: this test is kept back from the students' copy with it \
         (exercises/kept-back), so this is an instructors' copy, which must have it"
    );
    files
}

/// The file's path from the project's root, as the messages name it.
fn shown(file: &Path) -> String {
    file.strip_prefix(root()).unwrap_or(file).display().to_string()
}

/// The exercise a kept file answers, by the name its folder gives it.
fn exercise_of(name: &str) -> Option<&'static Exercise> {
    EXERCISES.iter().find(|e| e.name == name)
}

/// The file's verdict as the grader reads it for exercise `e` (its imports, its forbidden operations),
/// after the fuzz harness's own promises on the same bytes.
fn verdict(file: &Path, e: &Exercise) -> Verdict {
    let bytes = std::fs::read(file).unwrap_or_else(|err| panic!("{}: {err}", shown(file)));
    anatomy_intake::harness::rules(&bytes);
    let text = String::from_utf8(bytes).unwrap_or_else(|_| panic!("{} is not UTF-8", shown(file)));
    check(&text, e.uses, e.forbids)
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

/// Every honest file the project keeps is allowed by the rules of its exercise: a rule that refuses one
/// would refuse a student's right answer (or, for a wrong answer, fail it for a rule instead of its
/// mistake). Each refusal is named with the file, the line and the rule's words.
#[test]
fn every_file_the_project_keeps_passes_the_rules() {
    // (folder, the exercise's name from a file's path there)
    let stem = |f: &Path| f.file_stem().unwrap().to_string_lossy().into_owned();
    let parent = |f: &Path| f.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
    let style = |f: &Path| stem(f).rsplit('.').next().unwrap().to_string(); // STYLE.EXERCISE.rs
    type NameOf<'a> = &'a dyn Fn(&Path) -> String;
    let folders: [(&str, NameOf); 5] = [
        ("solutions", &stem),
        ("crates/course/src/stubs", &stem),
        ("tests/exercise-mistakes", &parent),
        ("tests/honest-styles", &style),
        ("tests/similarity-class", &stem),
    ];
    let (mut problems, mut read) = (Vec::new(), Vec::new());
    for (dir, name_of) in folders {
        let files = kept_files(dir);
        for file in &files {
            let name = name_of(file);
            let Some(e) = exercise_of(&name) else {
                problems.push(format!("{}: no exercise named {name:?}", shown(file)));
                continue;
            };
            match verdict(file, e) {
                Verdict::Allowed => {}
                Verdict::Refused(r) | Verdict::Unreadable(r) | Verdict::Beyond(r) => {
                    problems.push(format!("{}:{}: {} (the rules of {name})", shown(file), r.line, r.message))
                }
            }
        }
        read.push(format!("{dir} {}", files.len()));
    }
    assert!(problems.is_empty(), "{} kept file(s) the rules refuse:\n{}", problems.len(), problems.join("\n"));
    eprintln!("allowed: {}", read.join(", "));
}

/// Every hostile file the rules refuse (a refusal, or past what the grader reads) is refused with the words
/// of its `expect:` line (`A | B`: either), as the grader shows it to the student; one whose line says it
/// must change nothing (`passed`, `not done`) is allowed; every shortcut is refused.
#[test]
fn every_hostile_file_the_rules_refuse_is_refused_for_its_expect_line() {
    let (mut problems, mut refused) = (Vec::new(), 0);
    for file in kept_files("tests/hostile-class") {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|err| panic!("{}: {err}", shown(&file)));
        let expect =
            text.lines().find_map(|l| l.strip_prefix("//! expect: ").or_else(|| l.strip_prefix("// expect: ")));
        let Some(expect) = expect else {
            problems.push(format!("{}: no `//! expect:` line", shown(&file)));
            continue;
        };
        let shortcut = file.parent().is_some_and(|p| p.ends_with("shortcuts"));
        let name = file.file_stem().unwrap().to_string_lossy();
        let name = if shortcut { &*name } else { name.rsplit('.').next().unwrap() };
        let Some(e) = exercise_of(name) else {
            problems.push(format!("{}: no exercise named {name:?}", shown(&file)));
            continue;
        };
        let words: Vec<&str> = expect.split(" | ").map(str::trim).collect();
        match verdict(&file, e) {
            Verdict::Refused(r) | Verdict::Beyond(r) if ["passed", "not done"].contains(&expect) => {
                problems.push(format!("{}:{}: must change nothing, refused: {}", shown(&file), r.line, r.message))
            }
            Verdict::Refused(r) | Verdict::Beyond(r) if !words.iter().any(|w| r.message.contains(w)) => {
                problems.push(format!("{}:{}: refused with {:?}, not for {expect:?}", shown(&file), r.line, r.message))
            }
            Verdict::Refused(_) | Verdict::Beyond(_) => refused += 1,
            Verdict::Allowed | Verdict::Unreadable(_) if shortcut => {
                problems.push(format!("{}: a shortcut the rules let through", shown(&file)))
            }
            Verdict::Allowed | Verdict::Unreadable(_) => {}
        }
    }
    assert!(problems.is_empty(), "{} hostile file(s):\n{}", problems.len(), problems.join("\n"));
    // How many the rules refuse, pinned: a rule taken away lets its files through, which the loop above
    // allows for a file the sandbox (not the rules) is to stop. A new hostile file the rules refuse adds one.
    assert_eq!(refused, 28, "hostile files refused by the rules, each for its expect line");
}
