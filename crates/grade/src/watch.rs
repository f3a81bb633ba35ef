//! The watch mode's state (`anatomy exercises watch`, the rustlings loop): what it knows between two
//! inputs. The exercise it is on (the first that has not passed), how many of its hints it has shown, and
//! the file's modification time when it was last graded, so that a save told twice (by a file event and by
//! polling) is graded once. The command line's loop (`crates/cli/src/watch/`) reads the keys and file
//! events, turns each into one of these calls and prints what it returns; nothing here reads either.
use std::path::Path;
use std::time::SystemTime;

use anyhow::Result;

use super::progress::{self, relative};
use super::Exercise;

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

    /// Moves on to the first exercise that has not passed, with its hints from the first; `false` when
    /// every exercise has passed.
    pub fn advance(&mut self) -> bool {
        match progress::first_unfinished() {
            Some(next) => {
                *self = State::new(next);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_come_one_at_a_time_then_point_to_their_file() {
        let e = crate::find("layer_norm").unwrap();
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
