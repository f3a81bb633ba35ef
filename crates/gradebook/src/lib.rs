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
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rusqlite::{Connection, OpenFlags};

pub mod adjust;
pub mod export;
pub mod history;
pub mod location;
pub mod matching;
pub mod pages;
pub mod roster;
pub mod runs;
pub mod schema;

/// The gradebook's file name, beside a course file of the instructor's own, or in their data folder
/// ([`location::Location`]).
pub const FILE_NAME: &str = "gradebook.sqlite";

/// An open gradebook.
pub struct Gradebook {
    conn: Connection,
    path: PathBuf,
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
    /// neither, it is read as a file nobody changes (SQLite's `immutable`), unless a write-ahead log holds
    /// changes not yet in it. An older schema is read migrated in memory ([`schema::readable`]).
    pub fn read(path: &Path) -> Result<Gradebook> {
        if !path.is_file() {
            return Self::open(path);
        }
        let read = |immutable: bool| -> Result<Gradebook> {
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let conn = match immutable {
                false => Connection::open_with_flags(path, flags)?,
                true => Connection::open_with_flags(immutable_uri(path), flags | OpenFlags::SQLITE_OPEN_URI)?,
            };
            conn.busy_timeout(std::time::Duration::from_secs(30))?;
            Ok(Gradebook { conn: schema::readable(conn)?, path: path.to_path_buf() })
        };
        let pending = std::fs::metadata(wal_of(path)).is_ok_and(|m| m.is_file() && m.len() > 0);
        match read(false) {
            Err(e) if !pending && cannot_share(&e) => read(true),
            other => other,
        }
        .map_err(|e| refusal(path, e))
    }

    fn connect(path: &Path, flags: OpenFlags) -> Result<Gradebook> {
        let shown = path.display();
        let conn = Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .with_context(|| format!("cannot open the gradebook {shown}"))?;
        // Another grading may be writing: wait for it rather than fail.
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        let mut book = Gradebook { conn, path: path.to_path_buf() };
        schema::prepare(&mut book.conn).map_err(|e| refusal(path, e))?;
        Ok(book)
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

/// The write-ahead log beside a gradebook (`gradebook.sqlite-wal`).
fn wal_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push("-wal");
    PathBuf::from(name)
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

/// An SQLite error as one line that says what to do; other errors pass as they are.
fn refusal(path: &Path, e: anyhow::Error) -> anyhow::Error {
    use rusqlite::ErrorCode::*;
    let shown = path.display();
    let code = e.downcast_ref::<rusqlite::Error>().and_then(|e| e.sqlite_error_code());
    match code {
        Some(DiskFull) => anyhow::anyhow!(
            "the disk that holds the gradebook {shown} is full: nothing of this change was kept; free some space and do it again"
        ),
        Some(NotADatabase) => anyhow::anyhow!(
            "{shown} is not an SQLite file: give the gradebook's path, or restore it from a copy (a gradebook is one file; copy it to back it up)"
        ),
        Some(DatabaseCorrupt) => anyhow::anyhow!(
            "the gradebook {shown} is damaged: restore it from a copy (a gradebook is one file; copy it to back it up)"
        ),
        Some(ReadOnly) | Some(CannotOpen) | Some(PermissionDenied) => {
            anyhow::anyhow!("cannot write the gradebook {shown}: check the file's and its folder's permissions")
        }
        Some(DatabaseBusy) | Some(DatabaseLocked) => anyhow::anyhow!(
            "the gradebook {shown} stayed locked for 30 s by another grading: let it finish, then do this again"
        ),
        _ => e,
    }
}

#[cfg(test)]
mod tests;
