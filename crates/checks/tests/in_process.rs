//! Every check, run in this process on the course's own files — no probe, no sandbox: each declared
//! exercise's reference solution passes and its untouched stub is "not done", and every wrong answer in
//! `tests/exercise-mistakes/EXERCISE/` fails with the words of its `//! expect:` line and the mistake id it
//! is counted by (the file's name, or its `//! mistake:` line; `unnamed` for a failure the checks have no
//! name for) — the same source of truth as the pipeline's test, `crates/cli/tests/exercises.rs`. Every
//! mistake a check declares is shown by a wrong answer that the check names so.
//!
//! A check runs here as the homework notebook runs it (`anatomy_checks::notebook::check`): `run_check`
//! around `checks::NAME`, called with the file's functions; the gate (`checks::call`) compares every answer's
//! shape and kind before its values, as in the probe and the judge. Only the tape is left out (the probe's
//! `record`, the judge's `replay`): what the pipeline adds, the pipeline's test shows. Each check runs under
//! several seeds of LibTorch's generator (`tape::begin_check`, the probe's and the judge's seeding), one
//! at a time: the generator is global, and the tests of this file run on threads of one process.
//!
//! Which files: the exercises are those `crates/course/exercises.toml` declares; the functions each check
//! takes are read from it too (`check_with!`, below, written by the build script); the solutions, stubs and wrong answers are compiled in as
//! modules from the list the package's build script reads off the file system (`crates/checks/build.rs`,
//! `$OUT_DIR/exercise_files.rs`). No wrong answer is left to the pipeline: none loops, exits, aborts or
//! starts a thread; those that panic (LibTorch's errors: `keys_not_transposed`, `view_of_non_contiguous`)
//! are caught by the check's gate or by `run_check`, as in the notebook.
//!
//! They need `solutions/` and `tests/exercise-mistakes/`: in a students' copy this file compiles to nothing.
#![cfg(anatomy_solutions)]

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;

use anatomy_checks::checks::{self, CheckResult, CHECKS};
use anatomy_checks::mistakes::{NAMED, UNNAMED};
use anatomy_checks::{run_check, tape, Checked};
use anatomy_course::Status;
use anatomy_course::{project_root, EXERCISES};

/// The seeds each check runs under. The grader draws a fresh one per check and grading
/// (`anatomy_grade::grading::check_seed`); a check must give its verdict whatever it is.
/// The last one once let `label_smoothed_loss/smoothing_over_the_others` pass (its inputs were noise, on
/// which the two conventions can agree within the tolerance).
const SEEDS: [i64; 5] = [0, 1, 0x5eed, -7_340_210_915_428_816_473, -542_645_195_785_841_092];

/// [`SEEDS`], and `ANATOMY_CHECK_SEEDS=N` more (`i × 0x9e3779b97f4a7c15` for i = 1..=N), to look for a
/// check whose verdict depends on its inputs' draw: `ANATOMY_CHECK_SEEDS=200 cargo test -p anatomy-checks
/// --test in_process` takes a few minutes.
fn seeds() -> Vec<i64> {
    let more: i64 = std::env::var("ANATOMY_CHECK_SEEDS").ok().and_then(|n| n.parse().ok()).unwrap_or(0);
    SEEDS.into_iter().chain((1..=more).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_u64 as i64))).collect()
}

/// LibTorch's generator and the panic hook `run_check` silences are the process's: one check at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

// `check_with!(EXERCISE, path::to::module)`: the exercise's check, called with the module's functions, as a
// function; `None` for an exercise the declaration does not have. Written by `crates/checks/build.rs` from
// the declaration (`crates/course/exercises.toml`): the probe's generated `main` calls the checks the same
// way (`anatomy_grade::grading::build`), each function wrapped in a closure.
include!(concat!(env!("OUT_DIR"), "/check_with.rs"));

/// One of the course's files, compiled in: the exercise it answers, its name, where it is, and its check
/// run on its functions (`None`: its exercise is not declared).
struct File {
    exercise: &'static str,
    name: &'static str,
    path: &'static str,
    check: Option<fn() -> CheckResult>,
}

/// The modules and the lists of files, from the build script's list (`$OUT_DIR/exercise_files.rs`).
macro_rules! exercise_files {
    (
        solutions: [$($solution:ident $solution_path:literal),* $(,)?],
        stubs: [$($stub:ident $stub_path:literal),* $(,)?],
        wrong_answers: [$($exercise:ident [$($wrong:ident $wrong_path:literal),* $(,)?]),* $(,)?] $(,)?
    ) => {
        #[allow(dead_code, unused_imports, unused_variables, unused_mut, clippy::all)]
        mod solutions {
            $(#[path = $solution_path] pub mod $solution;)*
        }
        #[allow(dead_code, unused_imports, unused_variables, unused_mut, clippy::all)]
        mod stubs {
            $(#[path = $stub_path] pub mod $stub;)*
        }
        #[allow(dead_code, unused_imports, unused_variables, unused_mut, clippy::all)]
        mod wrong {
            $(pub mod $exercise {
                $(#[path = $wrong_path] pub mod $wrong;)*
            })*
        }
        const SOLUTIONS: &[File] = &[$(File {
            exercise: stringify!($solution),
            name: stringify!($solution),
            path: $solution_path,
            check: check_with!($solution, solutions::$solution),
        }),*];
        const STUBS: &[File] = &[$(File {
            exercise: stringify!($stub),
            name: stringify!($stub),
            path: $stub_path,
            check: check_with!($stub, stubs::$stub),
        }),*];
        const WRONG_ANSWERS: &[File] = &[$($(File {
            exercise: stringify!($exercise),
            name: stringify!($wrong),
            path: $wrong_path,
            check: check_with!($exercise, wrong::$exercise::$wrong),
        }),*),*];
    };
}

include!(concat!(env!("OUT_DIR"), "/exercise_files.rs"));

/// The check of `file` under one seed, as the notebook runs it; and how many of its parts passed.
fn run(file: &File, seed: i64) -> (Checked, Option<(usize, usize)>) {
    let check = file.check.expect("a declared exercise");
    let checked = run_check(|| {
        tape::begin_check(seed);
        check()
    });
    (checked, checks::take_parts())
}

/// `file`'s line `//! KEY: value`, if it has one.
fn line(file: &File, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(file.path).unwrap_or_else(|e| panic!("{}: {e}", file.path));
    text.lines().find_map(|l| l.strip_prefix(&format!("//! {key}: "))).map(str::to_string)
}

fn shown(path: &str) -> String {
    Path::new(path).strip_prefix(project_root()).map(|p| p.display().to_string()).unwrap_or_else(|_| path.into())
}

#[test]
fn every_solution_passes_its_check_and_every_stub_is_not_done() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut problems = Vec::new();
    for file in SOLUTIONS.iter().chain(STUBS).filter(|f| f.check.is_none()) {
        problems.push(format!("{}: no exercise of that name is declared", shown(file.path)));
    }
    let (seeds, started, mut runs) = (seeds(), std::time::Instant::now(), 0);
    for e in EXERCISES {
        let (Some(solution), Some(stub)) =
            (SOLUTIONS.iter().find(|f| f.exercise == e.name), STUBS.iter().find(|f| f.exercise == e.name))
        else {
            problems.push(format!("{}: no solution or no stub was compiled in", e.name));
            continue;
        };
        for &seed in &seeds {
            let (checked, parts) = run(solution, seed);
            if checked.status != Status::Passed || parts.is_some_and(|(passed, of)| passed != of) {
                problems.push(format!(
                    "solution {} (seed {seed}): {:?} {parts:?}: {}",
                    e.name, checked.status, checked.message
                ));
            }
            let (checked, _) = run(stub, seed);
            if checked.status != Status::NotDone || !checked.message.starts_with("not done yet") {
                problems.push(format!("stub {} (seed {seed}): {:?}: {}", e.name, checked.status, checked.message));
            }
            runs += 2;
        }
    }
    eprintln!(
        "{} solutions and {} stubs, {runs} checks in {:.2} s",
        EXERCISES.len(),
        EXERCISES.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn every_wrong_answer_fails_naming_its_mistake_and_every_named_mistake_has_one() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut problems = Vec::new();
    let mut shown_ids: BTreeSet<(&str, String)> = BTreeSet::new();
    let (seeds, started, mut runs) = (seeds(), std::time::Instant::now(), 0);
    for file in WRONG_ANSWERS {
        let where_ = shown(file.path);
        let Some(check) = file.check.and(CHECKS.iter().find(|c| c.exercise == file.exercise)) else {
            problems.push(format!("{where_}: no exercise {:?} is declared", file.exercise));
            continue;
        };
        let Some(expect) = line(file, "expect") else {
            problems.push(format!("{where_}: no `//! expect: ` line"));
            continue;
        };
        // The id it is counted by: its own name, unless it says otherwise.
        let id = line(file, "mistake").unwrap_or_else(|| file.name.to_string());
        let mut named_every_time = true;
        for &seed in &seeds {
            let (checked, _) = run(file, seed);
            runs += 1;
            let named = checked.mistake.map(|m| m.0).unwrap_or(UNNAMED);
            if checked.status != Status::Failed || !checked.message.contains(&expect) || named != id {
                problems.push(format!(
                    "{where_} (seed {seed}): expected a failure saying {expect:?} named {id:?}, got {:?} named \
                     {named:?}: {}",
                    checked.status, checked.message
                ));
                named_every_time = false;
            }
            // As the judge holds it (`checks::replayed`): a check names only a mistake it declares.
            if let Some(m) = checked.mistake.filter(|m| !check.mistakes.contains(m)) {
                problems.push(format!("{where_}: {} names {:?}, which it does not declare", file.exercise, m.0));
            }
        }
        if named_every_time && id != UNNAMED {
            shown_ids.insert((file.exercise, id));
        }
    }
    for e in EXERCISES {
        let count = WRONG_ANSWERS.iter().filter(|f| f.exercise == e.name).count();
        if count < 2 {
            problems.push(format!("{} has {count} wrong answers; every exercise needs at least two", e.name));
        }
    }
    for n in NAMED.iter().filter(|n| !shown_ids.contains(&(n.exercise, n.id.to_string()))) {
        problems.push(format!(
            "{}'s check declares the mistake {:?}, but no wrong answer in tests/exercise-mistakes/{}/ is named so by it under \
             every seed",
            n.exercise, n.id, n.exercise
        ));
    }
    // The list compiled in is the folder's as it is now (the build script reran when a file came or went).
    let folder: BTreeSet<String> = std::fs::read_dir(project_root().join("tests/exercise-mistakes"))
        .unwrap()
        .flatten()
        .filter(|d| d.path().is_dir())
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten().map(|f| f.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| shown(&p.display().to_string()))
        .collect();
    let compiled: BTreeSet<String> = WRONG_ANSWERS.iter().map(|f| shown(f.path)).collect();
    for missing in folder.difference(&compiled) {
        problems.push(format!("{missing}: not compiled in (the build script lists the folder: rebuild)"));
    }
    eprintln!(
        "{} wrong answers, {runs} checks in {:.2} s; {} of {} named mistakes shown",
        WRONG_ANSWERS.len(),
        started.elapsed().as_secs_f64(),
        shown_ids.len(),
        NAMED.len()
    );
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
