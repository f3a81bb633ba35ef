//! # The class grader
//!
//! What happens to a hand-in after the student: reading it ([`handin`], with the rules of
//! `anatomy_intake`), compiling it ([`grading`]'s build), running it in a sandbox ([`sandbox`], the probe's
//! run) and judging the recorded values ([`grading`], with the checks of `anatomy-checks`); a whole class
//! ([`class`]), a student's progress ([`progress`]), the course's points and late policy ([`course`]), and
//! what a grading gives: the gradebook, the class report, the similarity report and the course platforms'
//! files. The exercise list is `anatomy-course`'s ([`EXERCISES`]) and the checks are `anatomy-checks`'
//! ([`checks`]): both are re-exported here, so that the command line names one crate. Student files are
//! never compiled into this library: [`grading`] compiles each file on its own.
pub use anatomy_checks::{checks, mistakes, notebook, probe, run_check, tape, Checked};
pub use anatomy_course::{exercises_dir, find, markdown_table, Exercise, Outcome, Status, EXERCISES};

pub mod class;
pub mod course;
pub mod gradebook;
pub mod grading;
pub mod handin;
pub mod platforms;
pub mod progress;
pub mod report;
pub use anatomy_intake::rules;
pub mod sandbox;
pub mod similarity;
pub mod watch;
