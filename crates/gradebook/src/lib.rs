//! # The instructor's term, kept in a gradebook
//!
//! One grading is one run of the grader; a term is many: a class graded, a student regraded after a fix or
//! a late hand-in, a cell the instructor decides by hand, an extension for an illness. This crate keeps all
//! of it in one SQLite file ([`Location`]: beside the instructor's own course file, or in their data
//! folder — never inside the tree handed out to students), as nbgrader keeps its gradebook: the roster imported from the learning
//! platform ([`roster`]), every run recorded whole and never overwritten ([`runs`]), overrides and
//! extensions with who, when and why ([`adjust`]), the current grades and how each came to be
//! ([`history`]), and the files a platform imports back ([`export`]). Which hand-in is whose is decided
//! from the roster and the platform's own download names ([`matching`]), never from a folder's name alone.
//!
//! SQLite keeps its promises here: each change is one transaction (a run is in the file whole or not at
//! all, whatever kills the grader), the file is in WAL mode with a busy timeout so that two gradings at
//! once both land, a full disk fails the change and keeps what was there, and a file that is not a
//! gradebook, is damaged, or was written by a newer version is refused with a line that says what to do.
//! The schema is versioned ([`schema`]): an older file is migrated forward in a transaction when opened
//! to be changed. What only reads ([`Gradebook::read`]) opens it read-only and writes nothing, so that a
//! copy on a read-only share can be shown and exported.
//!
//! A gradebook may come from a colleague, so every file is opened as data, never code ([`trust`]): no
//! trigger or view of its own runs, its schema and values must be the grader's own, and lengths and
//! runaway statements are bounded, each refusal one line that names the file.
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rusqlite::{Connection, OpenFlags};

pub mod adjust;
pub mod command;
pub mod export;
pub mod history;
pub mod location;
pub mod matching;
pub mod pages;
pub mod roster;
pub mod runs;
pub mod schema;
pub mod trust;

/// The gradebook's file name, beside a course file of the instructor's own, or in their data folder
/// ([`location::Location`]).
pub const FILE_NAME: &str = "gradebook.sqlite";

/// An open gradebook.
pub struct Gradebook {
    conn: Connection,
    path: PathBuf,
    /// The statement watch of [`trust::harden`] (a test lowers its limit).
    #[allow(dead_code)]
    watch: std::sync::Arc<trust::Watch>,
    notice: Option<String>,
}

/// A point in time as the gradebook writes it: RFC 3339, UTC, to the microsecond and always with six
/// digits of it, so that a history's changes keep their order even within one second, as times and as text.
pub fn now() -> String {
    let t = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.microsecond()
    )
}

/// A recorded time as a person reads it: to the second.
pub fn to_the_second(at: &str) -> String {
    match at.split_once('.') {
        Some((seconds, _)) => format!("{seconds}Z"),
        None => at.to_string(),
    }
}

impl Gradebook {
    /// The gradebook of a course file: `gradebook.sqlite` in the course file's folder.
    pub fn beside(course_file: &Path) -> PathBuf {
        course_file.parent().unwrap_or(Path::new(".")).join(FILE_NAME)
    }

    /// Opens an existing gradebook, migrating an older schema forward. Refused, with what to do: a file
    /// that is missing, not a gradebook, damaged, or written by a newer version.
    pub fn open(path: &Path) -> Result<Gradebook> {
        if !path.is_file() {
            bail!(
                "there is no gradebook at {}: import a roster first (cargo anatomy exercises gradebook roster FILE)",
                path.display()
            );
        }
        Self::connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
    }

    /// Opens the gradebook, creating it (empty, at the newest schema) when there is none.
    pub fn open_or_create(path: &Path) -> Result<Gradebook> {
        Self::connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE)
    }

    /// Opens an existing gradebook to read it, never changing it (SQLite may add its `-wal` and `-shm`
    /// files beside it, where the folder can be written): on a read-only share, where SQLite can make
    /// neither, it is read as a file nobody changes (SQLite's `immutable`, said in [`Gradebook::notice`]),
    /// but only when no journal beside it holds a write: a write-ahead log's changes, or a rollback
    /// journal's write cut off before its commit, which `immutable` would read as committed. An older
    /// schema is read migrated in memory ([`schema::readable`]).
    pub fn read(path: &Path) -> Result<Gradebook> {
        if !path.is_file() {
            return Self::open(path);
        }
        let read = |immutable: bool| -> Result<Gradebook> {
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let mut conn = match immutable {
                false => Connection::open_with_flags(path, flags)?,
                true => Connection::open_with_flags(immutable_uri(path), flags | OpenFlags::SQLITE_OPEN_URI)?,
            };
            let watch = trust::harden(&mut conn)?;
            conn.busy_timeout(std::time::Duration::from_secs(30))?;
            let conn = schema::readable(conn, path)?;
            let notice = immutable.then(|| format!("{} is on a share SQLite cannot write its -wal and -shm files to, and no journal beside it holds a write: read as it is (SQLite's immutable)", path.display()));
            Ok(Gradebook { conn, path: path.to_path_buf(), watch, notice })
        };
        let pending = |end: &str| std::fs::metadata(beside(path, end)).is_ok_and(|m| m.is_file() && m.len() > 0);
        match read(false) {
            Err(e) if hot_journal(&e) || (cannot_share(&e) && pending("-journal")) => bail!(
                "the gradebook {} has a write cut off before its commit in {}-journal, which a read-only opening cannot roll back: any command that changes the gradebook (extend, override, late, roster) rolls it back first, where its folder can be written; then do this again",
                path.display(),
                path.display()
            ),
            Err(e) if !pending("-wal") && cannot_share(&e) => read(true),
            other => other,
        }
        .map_err(|e| refusal(path, e))
    }

    fn connect(path: &Path, flags: OpenFlags) -> Result<Gradebook> {
        let shown = path.display();
        let mut conn = Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .with_context(|| format!("cannot open the gradebook {shown}"))?;
        let watch = trust::harden(&mut conn).map_err(|e| refusal(path, e))?;
        // Another grading may be writing: wait for it rather than fail.
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        let mut book = Gradebook { conn, path: path.to_path_buf(), watch, notice: None };
        schema::prepare(&mut book.conn, path).map_err(|e| refusal(path, e))?;
        Ok(book)
    }

    /// What a person should know of how the file was read (a read-only share read as it is), if anything.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection, for this crate's modules.
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Runs `change` in one immediate transaction: all of it is kept, or — when it fails, or the disk is
    /// full — none of it.
    pub(crate) fn change<T>(&mut self, change: impl FnOnce(&rusqlite::Transaction) -> Result<T>) -> Result<T> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| refusal(&path, e.into()))?;
        let value = change(&tx).map_err(|e| refusal(&path, e))?;
        tx.commit().map_err(|e| refusal(&path, e.into()))?;
        Ok(value)
    }
}

/// A file SQLite keeps beside a gradebook: `-wal`, `-shm` or `-journal`.
fn beside(path: &Path, end: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(end);
    PathBuf::from(name)
}

/// Whether SQLite refused a read-only opening for a rollback journal it would have to roll back.
fn hot_journal(e: &anyhow::Error) -> bool {
    let code = e.downcast_ref::<rusqlite::Error>().and_then(|e| match e {
        rusqlite::Error::SqliteFailure(f, _) => Some(f.extended_code),
        _ => None,
    });
    code == Some(rusqlite::ffi::SQLITE_READONLY_ROLLBACK)
}

/// Whether SQLite could not open a WAL-mode file's shared memory (a read-only folder or share).
fn cannot_share(e: &anyhow::Error) -> bool {
    use rusqlite::ErrorCode::*;
    let code = e.downcast_ref::<rusqlite::Error>().and_then(|e| e.sqlite_error_code());
    matches!(code, Some(CannotOpen) | Some(ReadOnly))
}

/// `file:PATH?immutable=1`, the path's bytes other than letters, digits and `/._-` written `%XX`, as
/// SQLite's URIs read them.
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'/' | b'.' | b'_' | b'-' => uri.push(b as char),
            _ => uri += &format!("%{b:02X}"),
        }
    }
    uri + "?immutable=1"
}

/// An SQLite error as one line that names the gradebook and says what to do; other errors pass as they
/// are. The command line passes every error of a gradebook's command through it.
pub fn refusal(path: &Path, e: anyhow::Error) -> anyhow::Error {
    use rusqlite::ErrorCode::*;
    let shown = path.display();
    let Some(sqlite) = e.downcast_ref::<rusqlite::Error>() else { return e };
    let restore = "restore it from a copy (a gradebook is one file; copy it to back it up)";
    match sqlite.sqlite_error_code() {
        Some(DiskFull) => anyhow::anyhow!(
            "the disk that holds the gradebook {shown} is full: nothing of this change was kept; free some space and do it again"
        ),
        Some(NotADatabase) => {
            anyhow::anyhow!("{shown} is not an SQLite file: give the gradebook's path, or {restore}")
        }
        Some(DatabaseCorrupt) => anyhow::anyhow!("the gradebook {shown} is damaged: {restore}"),
        Some(ReadOnly) | Some(CannotOpen) | Some(PermissionDenied) => {
            anyhow::anyhow!("cannot write the gradebook {shown}: check the file's and its folder's permissions")
        }
        Some(DatabaseBusy) | Some(DatabaseLocked) => anyhow::anyhow!(
            "the gradebook {shown} stayed locked for 30 s by another grading: let it finish, then do this again"
        ),
        Some(OperationInterrupted) => anyhow::anyhow!(
            "a statement on the gradebook {shown} ran far longer than any term asks and was stopped: {restore}, or ask whoever gave it for the file the grader wrote"
        ),
        Some(TooBig) => anyhow::anyhow!(
            "the gradebook {shown} holds a value longer than {} bytes, which the grader never writes: {restore}, or ask whoever gave it for the file the grader wrote",
            trust::MAX_LENGTH
        ),
        // SQLite's own words, or a value of another type, with nothing of ours said over them.
        code if e.to_string() == sqlite.to_string() && (code.is_some() || unreadable(sqlite)) => anyhow::anyhow!(
            "the gradebook {shown} cannot be read as the grader writes it ({}): {restore}, or ask whoever gave it for the file the grader wrote",
            one_line(&sqlite.to_string())
        ),
        _ => e,
    }
}

/// Whether a value could not be read as the grader wrote it (another type, or out of range).
fn unreadable(e: &rusqlite::Error) -> bool {
    use rusqlite::Error::*;
    matches!(e, FromSqlConversionFailure(..) | InvalidColumnType(..) | IntegralValueOutOfRange(..))
}

/// SQLite's words on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;

#[cfg(test)]
#[path = "../../../tests/common/test_dir.rs"]
pub(crate) mod test_dir;
