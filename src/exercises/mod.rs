//! # What the exercises hand you
//!
//! The exercises themselves — their list, checks and grader — live in the workspace's `anatomy-exercises`
//! crate (`crates/exercises/`), which notebooks never build. Only the small types a student's function
//! receives are here, so that a student file needs nothing but this crate and `tch`.
pub mod support;
