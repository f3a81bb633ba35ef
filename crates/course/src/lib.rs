//! # The course's exercises, as data
//!
//! [`EXERCISES`] is the one list of exercises: `anatomy exercises list`, `check`, `watch`, `reset`,
//! `solution` and `grade` (a class), the table in `exercises/README.md`, the checks (`anatomy-checks`) and
//! the grader (`anatomy-grade`) all read it. It is written from the declaration,
//! `crates/course/exercises.toml` (one table per exercise, in course order), by this crate's build script.
//! An exercise is named once; its student file is
//! `exercises/NAME.rs`, its hints `exercises/hints/NAME.md`, its reference solution `solutions/NAME.rs`,
//! its untouched stub `crates/course/src/stubs/NAME.rs` (compiled in here, so that a student can always
//! get one back), and its check `anatomy_checks::checks::NAME`, which takes the student's functions (listed
//! in `functions`) in order. What an outcome is ([`Status`], [`Outcome`]) is declared here too.
//!
//! This crate is the bottom of the exercises' crates: it has no LibTorch and no grader, so that the
//! grader's intake (`anatomy-intake`, fuzzed on its own), the checks a student's program and the homework
//! notebook run (`anatomy-checks`) and the grader itself share one list without sharing anything else.
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub mod forbidden;
pub mod kept_back;
pub mod scaffold;
pub mod wire;
mod write;

pub use write::{target_may_be_replaced, write_whole, Partial};

/// How many wrong answers an exercise needs in `tests/exercise-mistakes/NAME/`, each named after a mistake
/// its check names (or saying `//! mistake: unnamed`): the one rule that `crates/checks/tests/declared.rs`
/// holds every exercise to, and that `anatomy exercises new` scaffolds.
pub const WRONG_ANSWERS_NEEDED: usize = 2;

/// The declaration of the exercises, below the project's root: one table per exercise, in course order
/// (`EXERCISES` is written from it; `anatomy exercises new` adds to it).
pub const DECLARATION: &str = "crates/course/exercises.toml";

#[path = "../../../src/project.rs"]
mod project;

/// The project's root: the folder that holds `grader/`, found when the program runs (the learner's
/// crate's `src/project.rs`, included here: this crate does not depend on that one).
pub use project::{program_root, project_root};

/// One exercise of the course.
#[derive(Debug)]
pub struct Exercise {
    pub name: &'static str,
    /// What it asks, in a line.
    pub summary: &'static str,
    /// The chapter notebook (`chapters/NN-….md`) that explains the step.
    pub chapter: &'static str,
    /// The chapter's own homework (encoder-decoder attention).
    pub homework: bool,
    /// The functions the student writes, in the order `checks::NAME` takes them, with their number of
    /// arguments.
    pub functions: &'static [(&'static str, usize)],
    /// The untouched student file.
    pub stub: &'static str,
    /// The hints, one numbered item per level.
    pub hints: &'static str,
    /// What the file may import from the learner's crate (paths below `transformer_anatomy::`): what its
    /// stub imports. Everything else of that crate is refused before compiling (the grader's rules,
    /// `anatomy_intake::rules`).
    pub uses: &'static [&'static str],
    /// The finished operations the exercise asks the student to write instead of call.
    pub forbids: &'static [&'static forbidden::Forbidden],
    /// What it is worth, unless the course file says otherwise (`anatomy_grade::points`).
    pub points: f64,
}

// `EXERCISES`, written by the build script from `crates/course/exercises.toml`: one table per exercise, in
// the order to do them, with its chapter, whether it is the chapter's homework, its default points, the
// functions the student writes with their arguments, a one-line summary, what it may import from the
// learner's crate, the finished operations it forbids ([`forbidden`]), and its check: the module of
// `anatomy_checks::checks` that holds the function `NAME`, and the mistakes it names. The exercise list,
// the checks' registry (`anatomy_checks::checks::CHECKS`, written by `crates/checks/build.rs` from the same
// file), the default points (`anatomy_grade::points`) and the tables of the docs ([`markdown_table`]) are
// all read from there; `crates/checks/tests/declared.rs` holds every file to it.
include!(concat!(env!("OUT_DIR"), "/exercises.rs"));

/// The folder of the student's files: `exercises/`, or the folder named by `ANATOMY_EXERCISES_DIR` (a
/// second set of files, say, or a test's scratch folder). Progress is kept there too.
pub fn exercises_dir() -> PathBuf {
    match std::env::var_os("ANATOMY_EXERCISES_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => project_root().join("exercises"),
    }
}

/// The instructors' table of the exercises (number, exercise, chapter, task, points), as exercises/README.md
/// shows it.
pub fn markdown_table() -> String {
    let mut text = String::from("| # | exercise | chapter | the task | points |\n| --- | --- | --- | --- | --- |\n");
    for e in EXERCISES {
        let task =
            if e.homework { format!("**the chapter's homework**: {}", e.summary) } else { e.summary.to_string() };
        text += &format!("| {} | `{}` | `{}` | {task} | {} |\n", e.number(), e.name, e.chapter, e.points);
    }
    text
}

/// The exercise of that name, or an error that lists the names.
pub fn find(name: &str) -> anyhow::Result<&'static Exercise> {
    EXERCISES.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = EXERCISES.iter().map(|e| e.name).collect();
        anyhow::anyhow!("no exercise named {name:?}: choose one of {}", names.join(", "))
    })
}

impl Exercise {
    /// The student's file.
    pub fn file(&self) -> PathBuf {
        exercises_dir().join(format!("{}.rs", self.name))
    }

    /// The hint file.
    pub fn hint_file(&self) -> PathBuf {
        project_root().join("exercises").join("hints").join(format!("{}.md", self.name))
    }

    /// The reference solution (present in instructors' copies only).
    pub fn solution_file(&self) -> PathBuf {
        project_root().join("solutions").join(format!("{}.rs", self.name))
    }

    /// Its position in the course, from 1.
    pub fn number(&self) -> usize {
        EXERCISES.iter().position(|e| e.name == self.name).expect("registered") + 1
    }

    /// The hints, one per level, in increasing detail (the numbered items of the hint file).
    pub fn hint_levels(&self) -> Vec<String> {
        let mut levels: Vec<String> = Vec::new();
        for line in self.hints.lines() {
            let starts_item =
                line.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if starts_item {
                levels.push(line.split_once(". ").expect("checked").1.to_string());
            } else if let Some(last) = levels.last_mut() {
                if !line.trim().is_empty() {
                    last.push(' ');
                    last.push_str(line.trim());
                }
            }
        }
        levels
    }
}

/// Where an exercise stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Passed,
    /// The body still calls `todo!()` (or `unimplemented!()`).
    NotDone,
    Failed,
    /// The file does not compile (the message is the compiler's first error in it).
    DoesNotCompile,
}

impl Status {
    /// Every status, in the order a report stacks them.
    pub const ALL: [Status; 4] = [Status::Passed, Status::Failed, Status::DoesNotCompile, Status::NotDone];

    /// How a table or list shows it.
    pub fn words(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::NotDone => "not done",
            Status::Failed => "failed",
            Status::DoesNotCompile => "does not compile",
        }
    }
}

/// The result of grading one file, with a message for the student.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The exercise.
    pub name: &'static str,
    /// What was graded ("causal_mask", or "ada/causal_mask" in a class).
    pub label: String,
    pub status: Status,
    pub message: String,
    /// For a check of independent parts: how many passed, and how many there are (partial credit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parts: Option<(usize, usize)>,
    /// What went wrong, as an id a class's report can count (`anatomy_checks::mistakes`): set for every outcome that
    /// failed or does not compile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mistake: Option<String>,
    /// What the code printed during its check, as a learner reads it under the verdict (escaped and cut by
    /// `anatomy_intake::printed`): kept when a learner grades their own files, never for a class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

#[cfg(test)]
mod tests;

#[cfg(test)]
#[path = "../../../tests/common/test_dir.rs"]
pub(crate) mod test_dir;
