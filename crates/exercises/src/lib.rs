//! # The exercises, as the command line sees them
//!
//! The course is built in crates by stage, each depending only on those below it, so that Cargo itself
//! refuses a circle between them:
//!
//! - `anatomy-course`: the exercise list with stubs and hints, and what an outcome is;
//! - `anatomy-intake`: everything read of a student's bytes (the stubs' rules, notebook cells, names, times);
//! - `anatomy-checks`: the checks, tape and probe, all that runs inside a student's program;
//! - `anatomy-grade`: the grader (hand-in, build, sandbox, run, judge), the points and late policy, and a
//!   student's progress;
//! - `anatomy-report`: what a grading gives (gradebook, class report, similarity report);
//! - `anatomy-platforms`: Gradescope, PrairieLearn, GitHub Classroom and nbgrader's release.
//!
//! This crate grades a class and writes its reports in one call ([`class`]), and re-exports every stage
//! under the names the command line and the tests use.
pub use anatomy_checks::{checks, mistakes, notebook, probe, run_check, tape, Checked};
pub use anatomy_course::{exercises_dir, find, markdown_table, Exercise, Outcome, Status, EXERCISES};
pub use anatomy_grade::{grading, handin, progress, sandbox, watch};
pub use anatomy_intake::rules;
pub use anatomy_platforms as platforms;
pub use anatomy_report::{gradebook, report, similarity};

pub mod class;

/// The course's points and late policy, and the times they are counted from.
pub mod course {
    pub use anatomy_grade::points::*;
    pub use anatomy_intake::times::{parse_due, parse_time};
}
