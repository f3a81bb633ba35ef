//! Where a course's gradebook is kept, and why there. The gradebook names the instructor's students, so it
//! is kept where instructors keep course data, never inside the tree handed out to students: beside a
//! course file of the instructor's own (`--course FILE`), else where `ANATOMY_GRADEBOOK` says, else in the
//! instructor's data folder (`$XDG_DATA_HOME/transformer-anatomy/`, by default
//! `~/.local/share/transformer-anatomy/`). Every command that finds none says where it looked and why.
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::{Gradebook, FILE_NAME};

/// The variable that names the gradebook of the project's own course file.
pub const VARIABLE: &str = "ANATOMY_GRADEBOOK";

/// The folder of the instructor's data folder that holds the gradebook.
pub const FOLDER: &str = "transformer-anatomy";

/// A gradebook's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    /// Why it is there, as a person reads it.
    pub why: &'static str,
    /// The place gradebooks were kept before (`exercises/gradebook.sqlite`, inside the handed-out tree),
    /// when a gradebook is still there.
    pub before: Option<PathBuf>,
}

impl Location {
    /// The gradebook of a course file: beside it when it is the instructor's own (`--course FILE`, any
    /// but the project's `exercises/course.toml`), else [`VARIABLE`]'s file, else the data folder's.
    pub fn of(course_file: Option<&Path>) -> Location {
        Self::found(course_file, &anatomy_grade::points::default_file(), &|name| std::env::var_os(name))
    }

    /// [`Location::of`], with the project's course file and the environment given.
    pub fn found(
        course_file: Option<&Path>,
        project: &Path,
        var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Location {
        let same =
            |a: &Path, b: &Path| a == b || a.canonicalize().ok().is_some_and(|a| Some(a) == b.canonicalize().ok());
        if let Some(own) = course_file.filter(|f| !same(f, project)) {
            return Location { path: Gradebook::beside(own), why: "beside the course file", before: None };
        }
        let before = Some(Gradebook::beside(project)).filter(|p| p.is_file());
        let env = |name: &str| var(name).map(PathBuf::from).filter(|p| !p.as_os_str().is_empty());
        if let Some(path) = env(VARIABLE) {
            return Location { path, why: "named by ANATOMY_GRADEBOOK", before };
        }
        let data = env("XDG_DATA_HOME")
            .filter(|p| p.is_absolute())
            .or_else(|| env("HOME").map(|home| home.join(".local/share")));
        match data {
            Some(data) => Location {
                path: data.join(FOLDER).join(FILE_NAME),
                why: "your data folder, outside the copy handed out to students; --course FILE keeps one beside a \
                      course file of yours, ANATOMY_GRADEBOOK=FILE names another",
                before,
            },
            None => Location {
                path: Gradebook::beside(project),
                why: "beside the project's course file, since neither HOME nor XDG_DATA_HOME is set",
                before: None,
            },
        }
    }

    /// Whether there is a gradebook here.
    pub fn exists(&self) -> bool {
        self.path.is_file()
    }

    /// Fails, saying where it looked and why, when there is no gradebook here (with the `mv` that moves one
    /// left where gradebooks were kept before).
    pub fn require(&self) -> Result<()> {
        if self.exists() {
            return Ok(());
        }
        if let Some(before) = &self.before {
            bail!(
                "the gradebook is kept in {} ({}), but yours is still at {}, inside the copy handed out to students: move it (mv {} {})",
                self.path.display(),
                self.why,
                before.display(),
                before.display(),
                self.path.display()
            );
        }
        bail!(
            "there is no gradebook at {} ({}): import a roster first (cargo anatomy exercises gradebook roster FILE)",
            self.path.display(),
            self.why
        )
    }

    /// Opens the gradebook to change it ([`Gradebook::open`]).
    pub fn open(&self) -> Result<Gradebook> {
        self.require()?;
        Gradebook::open(&self.path)
    }

    /// Opens the gradebook to read it only ([`Gradebook::read`]); how it was read, when a person should
    /// know (a read-only share read as it is), is said on the standard error.
    pub fn read(&self) -> Result<Gradebook> {
        self.require()?;
        let book = Gradebook::read(&self.path)?;
        if let Some(notice) = book.notice() {
            eprintln!("note: {notice}");
        }
        Ok(book)
    }

    /// `e` with the gradebook's path and what to do, where it is SQLite's own error and does not name the
    /// file already (the grader's refusals do): the words of [`crate::refusal`] where it has them (a full
    /// disk, a lock, a damaged file), else the path and "restore it from a copy" ("no such table"…).
    pub fn named(&self, e: anyhow::Error) -> anyhow::Error {
        let path = self.path.display().to_string();
        if e.downcast_ref::<rusqlite::Error>().is_none() || format!("{e:#}").contains(&path) {
            return e;
        }
        let e = crate::refusal(&self.path, e);
        if format!("{e:#}").contains(&path) {
            return e;
        }
        e.context(format!(
            "the gradebook {path} could not be read or written as asked: restore it from a copy, or ask whoever gave it for the file the grader wrote"
        ))
    }

    /// Opens the gradebook, creating it and its folder when there is none (and no older one to move).
    pub fn create(&self) -> Result<Gradebook> {
        if let (false, Some(_)) = (self.exists(), &self.before) {
            self.require()?;
        }
        if let Some(folder) = self.path.parent().filter(|f| !f.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder)
                .with_context(|| format!("cannot create the folder {}", folder.display()))?;
        }
        Gradebook::open_or_create(&self.path)
    }

    /// The gradebook as a person reads where it is: its path and why there.
    pub fn line(&self) -> String {
        format!("the gradebook {} ({})", self.path.display(), self.why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_s_own_errors_are_given_the_gradebook_s_path_and_the_grader_s_refusals_are_left_as_they_are() {
        let at = Location { path: PathBuf::from("/term/gradebook.sqlite"), why: "named", before: None };
        let sqlite = at.named(anyhow::Error::new(rusqlite::Error::QueryReturnedNoRows).context("history of ada"));
        assert_eq!(
            format!("{sqlite:#}"),
            "the gradebook /term/gradebook.sqlite could not be read or written as asked: restore it from a copy, or \
             ask whoever gave it for the file the grader wrote: history of ada: Query returned no rows"
        );
        let said = anyhow::anyhow!("the gradebook /term/gradebook.sqlite was written by a newer version");
        assert_eq!(
            format!("{:#}", at.named(said)),
            "the gradebook /term/gradebook.sqlite was written by a newer version"
        );
        let busy = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY), None);
        assert_eq!(
            format!("{:#}", at.named(anyhow::Error::new(busy))),
            "the gradebook /term/gradebook.sqlite stayed locked for 30 s by another grading: let it finish, then do \
             this again"
        );
        let other = anyhow::anyhow!("--points -0: give a number from 0 to 5");
        assert_eq!(format!("{:#}", at.named(other)), "--points -0: give a number from 0 to 5");
    }
}
