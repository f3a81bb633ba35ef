//! The exercise grader's recipe: a library that depends on exactly what a probe links against (the
//! learner's crate, the checks' crate `anatomy-checks` and tch) and holds no code of its own. The grader's
//! own `cargo build --workspace` builds it with everything a probe needs; `anatomy exercises` then reads off cargo's
//! messages for that same build how to compile and link a probe, and compiles every student's files with
//! `rustc` on their own, in a scratch folder (and, for a class, a sandbox). See
//! `crates/grade/src/grading/`.
//!
//! A library and not a program: the one program is `anatomy` (`cargo anatomy`, in crates/cli).
