//! A made-up class of 30, graded once through the binary as an instructor grades one (`anatomy exercises
//! grade --json --csv --report`), gets the right table: ada hands in nothing (every exercise is the untouched
//! stub); bob every reference solution, in an `exercises/` folder of his own; cy the solutions, but a
//! `causal_mask.rs` with a type error; dee the solutions with two wrong answers from
//! `tests/exercise-mistakes/`; 26 more students copy bob, cy or ada in turn (a class is mostly repeats), and
//! each copy is graded exactly as its original. Its class report agrees with the JSON lines and the CSV, and
//! is made again the same from the JSON lines.
//!
//! And a broken exercise file of the learner's breaks nothing but its own grade: the command is built from
//! none of the learner's files, and `anatomy exercises check` reports the file alone (in a scratch folder,
//! never the learner's own `exercises/`).
//!
//! It needs `solutions/` and the sandbox (bubblewrap, or Landlock where namespaces are refused).
#![cfg(anatomy_solutions)]

#[path = "../../../tests/common/class.rs"]
mod class;
#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use anatomy_course::project_root;
use anatomy_course::EXERCISES;
use anatomy_grade::sandbox::{self, SandboxChoice};
use class::{
    command, grade_with_report, hand_in_solutions, json_lines, report_agrees, report_made_again_the_same, run, Counted,
};
use serde_json::Value;
use test_dir::TestDir;

/// cy's `causal_mask.rs`: the stub's functions, with a type error on line 3.
const CY_CAUSAL_MASK: &str = "use tch::{Device, Tensor};\npub fn causal_mask(n: i64, device: Device) -> Tensor {\n    \
                              let n: i64 = \"seven\";\n    todo!()\n}\npub fn masked_softmax(s: &Tensor, m: &Tensor) \
                              -> Tensor { todo!() }\n";

/// The copies' originals, in turn: student01-cy, student02-ada, student03-bob, …
const ORIGINALS: [&str; 3] = ["bob", "cy", "ada"];

/// Writes the class of 30 into `class`.
fn make_class(class: &Path) {
    std::fs::create_dir_all(class.join("ada")).unwrap();
    hand_in_solutions(&class.join("bob/exercises"));
    hand_in_solutions(&class.join("cy"));
    std::fs::write(class.join("cy/causal_mask.rs"), CY_CAUSAL_MASK).unwrap();
    hand_in_solutions(&class.join("dee"));
    let mistakes = project_root().join("tests/exercise-mistakes");
    for (exercise, mistake) in [("split_heads", "view_without_transpose"), ("layer_norm", "unbiased_variance")] {
        std::fs::copy(mistakes.join(format!("{exercise}/{mistake}.rs")), class.join(format!("dee/{exercise}.rs")))
            .unwrap();
    }
    for i in 1..=26 {
        let original = ORIGINALS[i % 3];
        copy_folder(&class.join(original), &class.join(format!("student{i:02}-{original}")));
    }
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_folder(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// `student`'s row has `passed` exercises passed; each exercise's status is `others`, but those `special`
/// names.
fn expect(rows: &BTreeMap<String, Value>, student: &str, passed: usize, others: &str, special: &[(&str, &str)]) {
    let row = &rows[student];
    for e in EXERCISES {
        let want = special.iter().find(|(name, _)| *name == e.name).map_or(others, |(_, status)| status);
        assert_eq!(row[e.name], want, "{student}/{}: {}", e.name, row["messages"][e.name]);
    }
    assert_eq!(row["passed"], passed, "{student}'s passed");
}

#[test]
fn a_made_up_class_of_30_gets_the_right_table_and_a_report_that_agrees_with_it() {
    let dir = TestDir::new("class-of-30");
    let class = dir.join("class");
    make_class(&class);
    let (csv, report) = (dir.join("grades.csv"), dir.join("report"));
    let started = Instant::now();
    let (code, out, err) = grade_with_report(&class, &csv, &report, &[]);
    eprintln!("graded a class of 30 in {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(code, Some(0), "{err}");
    let lines = json_lines(&out);
    let rows: BTreeMap<String, Value> =
        lines.iter().map(|l| (l["student"].as_str().unwrap().into(), l.clone())).collect();
    assert_eq!((lines.len(), rows.len()), (30, 30), "one row a student");

    let n = EXERCISES.len();
    expect(&rows, "ada", 0, "not done", &[]);
    expect(&rows, "bob", n, "passed", &[]);
    expect(&rows, "cy", n - 1, "passed", &[("causal_mask", "does not compile")]);
    expect(&rows, "dee", n - 2, "passed", &[("split_heads", "failed"), ("layer_norm", "failed")]);
    // A copy is graded as its original: every field but its name and the messages (which name its files).
    let grades = |row: &Value| {
        let mut row = row.as_object().unwrap().clone();
        row.retain(|field, _| field != "student" && field != "messages");
        row
    };
    let mut copies = 0;
    for (student, row) in &rows {
        if let Some(original) = ORIGINALS.iter().find(|o| student.ends_with(&format!("-{o}"))) {
            assert_eq!(grades(row), grades(&rows[*original]), "{student} is graded as {original}");
            copies += 1;
        }
    }
    assert_eq!(copies, 26);
    let cy = rows["cy"]["messages"]["causal_mask"].as_str().unwrap();
    assert!(cy.contains("error[E0308]") && cy.contains("causal_mask.rs:3:"), "the compiler's first error: {cy}");
    let dee = rows["dee"]["messages"]["split_heads"].as_str().unwrap();
    assert!(dee.contains("without transpose"), "dee's split_heads names the mistake: {dee}");
    // Every student in the tier the grader chooses on this machine (bubblewrap where it can make namespaces).
    let tier = sandbox::choose(SandboxChoice::Auto).unwrap().name();
    for (student, row) in &rows {
        assert_eq!(row["sandbox_tier"], tier, "{student}'s sandbox");
    }

    // The report counts what the JSON lines and the CSV say: ada's 9 copies and ada are not done (no
    // mistake), cy and its 9 copies do not compile, and dee's two wrong answers.
    let names: Vec<&str> = EXERCISES.iter().map(|e| e.name).collect();
    let counted = report_agrees(&report, &lines, &csv, &names);
    let want: Counted = [
        ("causal_mask", "does_not_compile", 10),
        ("split_heads", "view_without_transpose", 1),
        ("layer_norm", "unbiased_variance", 1),
    ]
    .map(|(e, m, n)| ((e.to_string(), m.to_string()), n))
    .into();
    assert_eq!(counted, want);
    report_made_again_the_same(&dir, &out, &report);
}

/// The files cargo built the `anatomy` binary from, as its dep-info (`anatomy.d`, beside it) lists them,
/// each path with its `..` resolved.
fn built_from() -> Vec<PathBuf> {
    let info = std::fs::read_to_string(format!("{}.d", env!("CARGO_BIN_EXE_anatomy"))).unwrap();
    let (_, files) = info.lines().next().unwrap().split_once(": ").unwrap();
    let files = files.replace("\\ ", "\u{0}");
    let resolve = |file: &str| {
        let mut path = PathBuf::new();
        for part in Path::new(&file.replace('\u{0}', " ")).components() {
            match part {
                Component::ParentDir => {
                    path.pop();
                }
                other => path.push(other),
            }
        }
        path
    };
    files.split_whitespace().map(resolve).collect()
}

/// A type error in the learner's `causal_mask.rs` breaks nothing but its own grade. `cargo build` builds
/// the command from none of the learner's exercise files (of `exercises/`, it reads the hints and the list
/// of what is kept back), so no such file can break the build or any command that does not grade it.
/// `anatomy exercises check causal_mask` reports the broken file with its line, and `check --solutions`
/// still grades every reference solution, with a scratch folder (`ANATOMY_EXERCISES_DIR`) standing for the
/// learner's `exercises/`, which is never touched.
#[test]
fn a_broken_exercise_file_of_the_learners_breaks_nothing_but_its_own_grade() {
    let root = project_root();
    let files = built_from();
    assert!(files.contains(&root.join("crates/cli/src/main.rs")), "the binary's dep-info: {files:?}");
    let learners = root.join("exercises");
    let theirs: Vec<&PathBuf> =
        files.iter().filter(|f| f.starts_with(&learners) && f.extension().is_some_and(|x| x == "rs")).collect();
    assert!(theirs.is_empty(), "the command is built from the learner's files {theirs:?}");

    let dir = TestDir::new("broken-exercise");
    std::fs::write(dir.join("causal_mask.rs"), "pub fn causal_mask(n: i64) -> i64 { n + \"1\" }\n").unwrap();
    let check =
        |args: &[&str]| run(command().args(["exercises", "check"]).args(args).env("ANATOMY_EXERCISES_DIR", &*dir));
    let (code, out, err) = check(&["causal_mask"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.contains("does not compile") && out.contains("causal_mask.rs:1:"), "{out}");
    let (code, out, err) = check(&["--solutions"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.ends_with(&format!("{n} of {n} reference solutions passed\n", n = EXERCISES.len())), "{out}");
}
