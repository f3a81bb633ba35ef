//! The exercise grader's recipe. `anatomy exercises` builds this package once with a small program named
//! in `ANATOMY_GRADER_PLAN` that uses the library but no student file, and reads off cargo's messages how
//! to compile and link a probe against the built library; every student's files are then compiled by
//! `rustc` on their own, in a scratch folder (and, for a class, a sandbox). See
//! `crates/exercises/src/grading/`.
include!(env!("ANATOMY_GRADER_PLAN"));
