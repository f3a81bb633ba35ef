//! # What the exercises hand you
//!
//! The exercises themselves live in the workspace's own crates: their list in `anatomy-course`
//! (`crates/course/`), their checks in `anatomy-checks` (`crates/checks/`, which the homework notebook
//! builds) and the grader in `anatomy-grade` (`crates/grade/`), which no notebook builds. Only the
//! small types a student's function receives are here, so that a student file needs nothing but this
//! crate and `tch`.
pub mod support;
