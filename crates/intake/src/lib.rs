//! # What the grader reads of a student's bytes, in its own process
//!
//! Before any sandbox starts, the grader reads what a student handed in: the stubs' rules parse each file
//! ([`rules`]), a notebook's solution cells are taken out of its JSON ([`cells`]), the similarity report
//! tokenizes every file ([`similarity`]), a hand-in's time is read ([`times`]), every student folder's
//! name becomes a label ([`names`]), and a class list from a learning platform and its download's file names
//! are read ([`roster`]). While a student's code runs, what it sends back is read here too: the
//! frames of the tape and the tensors they carry ([`tape`]), and what it printed, shown to a learner under
//! the verdict ([`printed`]). A student decides these bytes, so none of them may decide how deep a
//! reader recurses or how much it allocates ([`bounds`]), and no two students may end up with one label.
//! The files that reach the instructor from elsewhere (a platform's job file, a course file, saved grading
//! lines) are read by the same rule: up to a stated size ([`files`]), and JSON only for the values wanted
//! ([`json`]).
//!
//! This crate holds exactly that, and no LibTorch: the fuzzing harness (`fuzz/`, `make fuzz`) builds it
//! alone and drives each of these entry points with bytes of its own making, and `tests/corpus.rs` runs
//! the harness's corpus (every hostile file the project has, and what fuzzing found) in `cargo test`.
pub mod bounds;
pub mod cells;
pub mod files;
pub mod harness;
pub mod json;
pub mod names;
pub mod printed;
pub mod roster;
pub mod rules;
pub mod similarity;
pub mod tape;
pub mod times;

#[cfg(test)]
#[path = "../../../tests/common/test_dir.rs"]
pub(crate) mod test_dir;
