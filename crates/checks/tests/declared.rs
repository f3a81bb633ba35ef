//! Every exercise the course declares (`anatomy_course::for_each_exercise`) has what it needs, and nothing
//! exists that no declaration names — as rustlings' `dev check` holds its exercises to `info.toml`: a stub
//! (compiled in), a solution, hints of at least one level, a check with its named mistakes, and
//! `WRONG_ANSWERS_NEEDED` wrong answers in `tests/exercise-mistakes/NAME/`, one at least for a named
//! mistake; no stub, solution, hint file or
//! folder of wrong answers for an exercise that is not declared. Instructors' copies only: this file is
//! kept back from the students' copy with the solutions and the wrong answers (`exercises/kept-back`), so
//! where it runs, a missing `solutions/` is a failure, never a students' copy to skip.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anatomy_checks::checks::CHECKS;
use anatomy_checks::mistakes::NAMED;
use anatomy_course::kept_back::{self, KeptBack};
use anatomy_course::{project_root, EXERCISES, WRONG_ANSWERS_NEEDED};

/// The stems of the files in `dir` with the extension `ext`, or of its folders when `ext` is empty.
fn names(dir: &Path, ext: &str) -> BTreeSet<String> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| if ext.is_empty() { p.is_dir() } else { p.extension().is_some_and(|x| x == ext) })
        .map(|p| p.file_stem().unwrap().to_string_lossy().to_string())
        .collect()
}

#[test]
fn every_declared_exercise_has_its_files_and_nothing_undeclared_exists() {
    let root = project_root();
    // This file is kept back from the students' copy with the solutions (exercises/kept-back): a checkout
    // that runs it is an instructors' copy, and one without solutions/ is a broken one, not a students'.
    let list = KeptBack::read(&root).unwrap_or_else(|e| panic!("{}: {e}", root.join(kept_back::FILE).display()));
    for path in ["crates/checks/tests/declared.rs", "solutions/"] {
        assert!(
            list.holds(path),
            "{} does not keep back {path}: the students' copy would run this test",
            kept_back::FILE
        );
    }
    assert!(
        root.join("solutions").is_dir(),
        "{} is missing: this test is kept back from the students' copy ({}), so this is an instructors' \
         copy, whose reference solutions must be there (restore solutions/, e.g. `git checkout -- solutions`)",
        root.join("solutions").display(),
        kept_back::FILE
    );
    let declared: BTreeSet<String> = EXERCISES.iter().map(|e| e.name.to_string()).collect();
    let mut problems = Vec::new();
    for e in EXERCISES {
        if e.stub.trim().is_empty() {
            problems.push(format!("{}: an empty stub", e.name));
        }
        if !e.solution_file().is_file() {
            problems.push(format!("{}: no solution {}", e.name, e.solution_file().display()));
        }
        if e.hint_levels().is_empty() {
            problems.push(format!("{}: no numbered hint in {}", e.name, e.hint_file().display()));
        }
        if e.functions.is_empty() || e.points < 0.0 {
            problems.push(format!("{}: no function, or negative points", e.name));
        }
        let check = CHECKS.iter().find(|c| c.exercise == e.name);
        if check.is_none() {
            problems.push(format!("{}: no check", e.name));
        }
        let wrong: BTreeSet<String> = match std::fs::read_dir(root.join("tests/exercise-mistakes").join(e.name)) {
            Ok(_) => names(&root.join("tests/exercise-mistakes").join(e.name), "rs"),
            Err(_) => BTreeSet::new(),
        };
        let named = NAMED.iter().filter(|n| n.exercise == e.name).map(|n| n.id.to_string()).collect::<BTreeSet<_>>();
        if named.is_empty() || wrong.intersection(&named).next().is_none() || wrong.len() < WRONG_ANSWERS_NEEDED {
            problems.push(format!(
                "{}: {} wrong answers in tests/exercise-mistakes/{}/, {WRONG_ANSWERS_NEEDED} needed, one at least \
                 for a named mistake (named: {named:?})",
                e.name,
                wrong.len(),
                e.name
            ));
        }
    }
    let places: [(PathBuf, &str); 4] = [
        (root.join("crates/course/src/stubs"), "rs"),
        (root.join("solutions"), "rs"),
        (root.join("exercises/hints"), "md"),
        (root.join("tests/exercise-mistakes"), ""),
    ];
    for (dir, ext) in places {
        for name in names(&dir, ext).difference(&declared) {
            problems.push(format!("{}/{name}: no exercise of that name is declared", dir.display()));
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
