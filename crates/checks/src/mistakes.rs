//! Mistakes that can be counted. A check names a known wrong answer in words a student can act on ("the
//! variance is the unbiased one"); summed over a class, those names tell a lecturer which step went wrong
//! and how. So every outcome that is not a pass carries a stable id: the named mistake's (the same name
//! as its wrong answer in `tests/exercise-mistakes/EXERCISE/ID.rs`, whose test checks that the grader
//! gives exactly that id), one of the grader's own ([`STOPS`]: refusals, compile errors, the sandbox's
//! limits), or [`UNNAMED`] for a failure no name covers.
//!
//! Each exercise's table in `crates/course/exercises.toml` declares its check's named mistakes (constants of
//! its checks module, written from there), and the check returns the id with the message
//! ([`crate::checks::CHECKS`]); the grader gives its own ids where it decides, from what it observes of a
//! check's process — its status, a signal, the grader's own limits (`grading/run/`) — and never from what
//! the process prints. No id is read back out of a message of ours, so rewording one cannot change what it
//! counts as. One place still reads a panic's text, which a student's code can write too: a check's `call`
//! names LibTorch's errors it knows (a wrong width, an untransposed key); at worst a student so picks the
//! id of a mistake of that same exercise, in a cell that fails either way.
use std::sync::LazyLock;

use crate::checks::CHECKS;

/// A failure no named mistake covers: a wrong value the checks know no name for, or a panic.
pub const UNNAMED: &str = "unnamed";

/// A named mistake of one exercise.
#[derive(Debug, Clone, Copy)]
pub struct Named {
    pub exercise: &'static str,
    pub id: &'static str,
}

/// Every named mistake, by exercise in course order, as the checks declare them.
pub static NAMED: LazyLock<Vec<Named>> = LazyLock::new(|| {
    CHECKS.iter().flat_map(|c| c.mistakes.iter().map(|m| Named { exercise: c.exercise, id: m.0 })).collect()
});

/// The grader's own ids, with what each means (the report's words): refusals before anything is
/// compiled, the compiler's verdicts, and the sandbox's limits.
pub const STOPS: &[(&str, &str)] = &[
    ("refused_hand_in", "the file was refused as handed in (a link, not a regular file, too large)"),
    ("refused_by_rules", "the file uses something its exercise does not allow (the stubs' rules)"),
    ("not_utf8", "the file is not UTF-8 text"),
    ("beyond_reading_limits", "the file nests deeper or runs longer than the grader reads (its bounds)"),
    ("does_not_compile", "the compiler found an error in the file"),
    ("compile_limit", "compiling it was stopped at a limit (time, memory, output size)"),
    ("timed_out", "the check ran out of time (an endless loop?)"),
    ("out_of_memory", "the code ran out of memory"),
    ("too_much_output", "the code printed more than allowed"),
    ("disk_limit", "the code wrote more to disk than allowed"),
    ("forbidden_call", "the code made a system call the sandbox forbids"),
    ("crashed", "the code crashed or ended in the middle of the check"),
    ("too_large", "an answer was larger than the grader records (its limit for one answer or one check)"),
    ("broken_record", "the code wrote to the grader's channel itself, and its record could not be read"),
];

/// The grader's own ids that the sandbox's limits give, as `grading/run.rs` and the judge set them.
pub const TIMED_OUT: &str = "timed_out";
pub const OUT_OF_MEMORY: &str = "out_of_memory";
pub const TOO_MUCH_OUTPUT: &str = "too_much_output";
pub const DISK_LIMIT: &str = "disk_limit";
pub const FORBIDDEN_CALL: &str = "forbidden_call";
pub const CRASHED: &str = "crashed";
pub const TOO_LARGE: &str = "too_large";
pub const BROKEN_RECORD: &str = "broken_record";

/// What an id means, in words: the grader's own from [`STOPS`], a named mistake as its id reads
/// (`unbiased_variance` → "unbiased variance").
pub fn words(id: &str) -> String {
    match STOPS.iter().find(|(stop, _)| *stop == id) {
        Some((_, words)) => words.to_string(),
        None if id == UNNAMED => "a failure no named mistake covers".to_string(),
        None => id.replace('_', " "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_mistake_is_of_a_registered_exercise_with_a_distinct_id() {
        let mut seen = std::collections::BTreeSet::new();
        for n in NAMED.iter() {
            assert!(anatomy_course::find(n.exercise).is_ok(), "{}", n.exercise);
            assert!(seen.insert((n.exercise, n.id)), "{}/{} twice", n.exercise, n.id);
            assert!(!STOPS.iter().any(|(s, _)| *s == n.id) && n.id != UNNAMED, "{} is the grader's", n.id);
        }
    }

    #[test]
    fn every_exercise_has_its_check_declared_once_in_course_order() {
        let checks: Vec<&str> = CHECKS.iter().map(|c| c.exercise).collect();
        let exercises: Vec<&str> = anatomy_course::EXERCISES.iter().map(|e| e.name).collect();
        assert_eq!(checks, exercises);
    }

    #[test]
    fn every_stop_id_the_grader_sets_is_listed() {
        for id in
            [TIMED_OUT, OUT_OF_MEMORY, TOO_MUCH_OUTPUT, DISK_LIMIT, FORBIDDEN_CALL, CRASHED, TOO_LARGE, BROKEN_RECORD]
        {
            assert!(STOPS.iter().any(|(s, _)| *s == id), "{id}");
        }
    }
}
