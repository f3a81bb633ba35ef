//! The watch mode's state (`anatomy exercises watch`, the rustlings loop): what it knows between two
//! inputs. The exercise it is on (the first that has not passed, or the one the learner chose), how many of its hints it has shown, and
//! the file's modification time when it was last graded, so that a save told twice (by a file event and by
//! polling) is graded once. The command line's loop (`crates/cli/src/watch/`) reads the keys and file
//! events, turns each into one of these calls and prints what it returns; nothing here reads either.
use std::path::Path;
use std::time::{Instant, SystemTime};

use anyhow::Result;

use anatomy_course::{Exercise, Outcome, Status};

use crate::grading;
use crate::progress::{self, mark, printed_block, relative, Repeat};

pub struct State {
    pub current: &'static Exercise,
    hints_shown: usize,
    graded: Option<SystemTime>,
}

impl State {
    pub fn new(current: &'static Exercise) -> Self {
        State { current, hints_shown: 0, graded: progress::saved_at(current) }
    }

    /// The next hint, numbered, or where all of them are once every one has been shown.
    pub fn next_hint(&mut self) -> String {
        let levels = self.current.hint_levels();
        match levels.get(self.hints_shown) {
            Some(hint) => {
                self.hints_shown += 1;
                format!("hint {}/{}: {hint}\n", self.hints_shown, levels.len())
            }
            None => format!("no more hints; all of them are in {}\n", relative(&self.current.hint_file())),
        }
    }

    /// Puts the untouched stub back; the stub as written is not a save to grade.
    pub fn reset(&mut self) -> Result<String> {
        progress::reset(self.current)?;
        self.graded = progress::saved_at(self.current);
        Ok(format!("{} is the untouched stub again\n", relative(&self.current.file())))
    }

    /// Whether a save of `path` is one to grade: the current exercise's file, changed since it was graded.
    pub fn is_new_save(&self, path: &Path) -> bool {
        path == self.current.file() && progress::saved_at(self.current) != self.graded
    }

    /// Remembers the file as it is now as graded.
    pub fn mark_graded(&mut self) {
        self.graded = progress::saved_at(self.current);
    }

    /// Moves on to the next exercise after this one that has not passed (from the start again past the
    /// last), with its hints from the first; `false` when every exercise has passed.
    pub fn advance(&mut self) -> bool {
        match progress::next_unfinished(self.current) {
            Some(next) => {
                *self = State::new(next);
                true
            }
            None => false,
        }
    }

    /// Makes `e` the current exercise, whatever its place or status (the list's choice, `watch NAME`).
    pub fn choose(&mut self, e: &'static Exercise) {
        *self = State::new(e);
    }
}

/// What one grade of the watch mode gave: the outcome with the named mistakes made again, or the
/// grader's own error. The loop runs [`WatchResult::grade`] on a thread of its own and prints [`WatchResult::text`].
pub struct WatchResult {
    pub exercise: &'static Exercise,
    graded: std::result::Result<(Outcome, Vec<Repeat>, Option<String>), String>,
    seconds: f64,
}

impl WatchResult {
    /// Grades the learner's file of `e` as `check` does and records the outcome in the progress file, for
    /// the file as it was when the grade began. A panic of the grader itself is its error, not the loop's.
    pub fn grade(e: &'static Exercise) -> WatchResult {
        let started = Instant::now();
        let bytes = std::fs::read(e.file()).ok();
        let graded = std::panic::catch_unwind(|| grading::grade(&progress::own_files(&[e])))
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the grader itself failed (a panic): run the check again")))
            .map_err(|err| format!("{err:#}"))
            .map(|mut o| {
                let outcome = o.remove(0);
                match progress::record_graded(std::slice::from_ref(&outcome), &[bytes]) {
                    Ok(repeats) => (outcome, repeats, None),
                    Err(err) => (outcome, Vec::new(), Some(format!("{err:#}"))),
                }
            });
        WatchResult { exercise: e, graded, seconds: started.elapsed().as_secs_f64() }
    }

    /// The status, unless the grader itself failed.
    pub fn status(&self) -> Option<Status> {
        self.graded.as_ref().ok().map(|(o, _, _)| o.status)
    }

    /// The verdict as the learner reads it: the mark, the exercise and its file, the status and time, the
    /// check's message, what the code printed, the mistakes made again and, once passed, where the
    /// reference solution is.
    pub fn text(&self) -> String {
        let e = self.exercise;
        let (outcome, repeats, unsaved) = match &self.graded {
            Ok(graded) => graded,
            Err(err) => return format!("error: {err}\n"),
        };
        let (status, seconds) = (outcome.status, self.seconds);
        let mut text = format!(
            "{} exercise {} {} ({}): {} [graded in {seconds:.1} s]\n{}\n",
            mark(Some(status)),
            e.number(),
            e.name,
            relative(&e.file()),
            status.words(),
            outcome.message
        );
        text += &printed_block(outcome);
        if let Some(why) = unsaved {
            text += &format!("(progress not saved: {why})\n");
        }
        for r in repeats {
            text += &format!("{}\n", r.words());
        }
        if status == Status::Passed && e.solution_file().exists() {
            text += &format!("the reference solution: `cargo anatomy exercises solution {}`\n", e.name);
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_come_one_at_a_time_then_point_to_their_file() {
        let e = anatomy_course::find("layer_norm").unwrap();
        let levels = e.hint_levels();
        assert!(levels.len() >= 2, "layer_norm has hints to show");
        let mut state = State::new(e);
        for (i, level) in levels.iter().enumerate() {
            assert_eq!(state.next_hint(), format!("hint {}/{}: {level}\n", i + 1, levels.len()));
        }
        let done = state.next_hint();
        assert!(done.starts_with("no more hints; all of them are in ") && done.contains("layer_norm.md"), "{done}");
        assert_eq!(state.next_hint(), done, "the last answer stays");
    }
}
