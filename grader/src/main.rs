//! The exercise grader's recipe: a program that uses the library but no student file. It is built with
//! the rest of the workspace (it is a default member), and `anatomy exercises` reads off cargo's messages
//! for that same build how to compile and link a probe against the built library; every student's files
//! are then compiled by `rustc` on their own, in a scratch folder (and, for a class, a sandbox). See
//! `crates/exercises/src/grading/`.
fn main() {
    println!("{} exercises", anatomy_exercises::EXERCISES.len());
}
