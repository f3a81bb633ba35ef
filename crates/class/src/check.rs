//! `anatomy exercises check` as a whole: the learner's own files (or the reference solutions) graded and
//! the learner's progress recorded; the command line prints [`OwnCheck`].
use anyhow::Result;

use anatomy_grade::grading;
use anatomy_grade::progress::{self, CheckSummary, Repeat};

use crate::chosen;

/// A learner's own files graded (`anatomy exercises check`): the checked exercises, and the mistakes made
/// again since the last grading (none when the reference solutions were graded).
pub struct OwnCheck {
    pub checked: CheckSummary,
    pub repeats: Vec<Repeat>,
}

impl OwnCheck {
    /// Whether every exercise checked passed.
    pub fn all_passed(&self) -> bool {
        self.checked.passed == self.checked.total
    }
}

/// Grades the learner's file of one exercise (`name`) or of all, or the reference solutions
/// (`solutions`), and records the learner's progress.
pub fn check(name: Option<String>, solutions: bool) -> Result<OwnCheck> {
    let chosen = chosen(&name.into_iter().collect::<Vec<_>>())?;
    let outcomes = grading::grade(&progress::to_check(&chosen, solutions)?)?;
    let repeats = if solutions { Vec::new() } else { progress::record(&outcomes)? };
    Ok(OwnCheck { checked: CheckSummary::new(solutions, outcomes), repeats })
}
