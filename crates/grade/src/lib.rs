//! # The grader
//!
//! What happens to a hand-in after the student: reading it ([`handin`], with the rules of
//! `anatomy_intake`), compiling it ([`grading`]'s build), running it in a sandbox ([`sandbox`], the probe's
//! run) and judging the recorded values ([`grading`], with the checks of `anatomy-checks`); and, for a
//! student at their own machine, their progress ([`progress`]) and the watch mode's state ([`watch`]);
//! and what each exercise is worth and what lateness costs ([`points`], from `exercises/course.toml`),
//! kept here and not with the exercise list so that the homework notebook's kernel builds no TOML reader.
//! What a grading gives (the grade sheet, the reports) is `anatomy-report`'s, which reads this crate's
//! outcomes and never the other way round. Student files are never compiled into this library:
//! [`grading`] compiles each file on its own.

pub mod grading;
pub mod handin;
pub mod points;
pub mod progress;
pub mod sandbox;
pub mod watch;

#[cfg(test)]
#[path = "../../../tests/common/test_dir.rs"]
pub(crate) mod test_dir;
