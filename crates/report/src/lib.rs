//! # What a grading gives
//!
//! The grader (`anatomy-grade`) turns each hand-in into an outcome; this crate turns a class's outcomes
//! into what people read: the grade sheet ([`sheet`]: the table, the CSV, each student's feedback and the
//! typed JSON line of `grade --json`), the class report ([`report`]: the mistakes, statuses and points as
//! one page, made again from those JSON lines without grading) and the similarity report ([`similarity`]:
//! which students handed in matching files). It reads the grader's types and never grades.

pub mod sheet;
pub mod report;
pub mod similarity;

#[cfg(test)]
#[path = "../../../tests/common/test_dir.rs"]
pub(crate) mod test_dir;

/// `n` things in words, one or many: "1 student", "2 students", "0 students".
pub(crate) fn counted(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}
