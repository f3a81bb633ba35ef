//! The gradebook's schema, versioned: [`MIGRATIONS`] holds every version's step, in order, and a file's
//! version is SQLite's `user_version`. Opening a file at an older version runs the missing steps in one
//! transaction; a newer file is refused (this grader would not know its tables). The file is marked as
//! ours by SQLite's `application_id`, so that another program's database is refused rather than changed.
use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{bail, Result};
use rusqlite::Connection;

/// `application_id`: "ANAT" in ASCII.
pub const APPLICATION_ID: i32 = 0x414e_4154;

/// Each version's step: `MIGRATIONS[n]` takes a file from version `n` to `n + 1`.
pub const MIGRATIONS: &[&str] = &[
    // 1: the roster, the runs with their cells and the files they graded, overrides and extensions.
    "CREATE TABLE students (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,          -- as the learning platform writes it
        lms_id TEXT NOT NULL UNIQUE, -- the platform's own id (Canvas: ID)
        sis_id TEXT NOT NULL,        -- the institution's id (Canvas: SIS User ID), or ''
        login TEXT NOT NULL,         -- Canvas: SIS Login ID, or ''
        section TEXT NOT NULL,
        label TEXT NOT NULL UNIQUE   -- how every output names the student
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,            -- when the grading was recorded (RFC 3339)
        grader TEXT NOT NULL,        -- the grader's version and build
        seed INTEGER NOT NULL,
        tier TEXT NOT NULL,          -- the sandbox
        assignment TEXT NOT NULL,
        due TEXT,                    -- the assignment's due date, as graded
        exercises TEXT NOT NULL      -- the exercises graded, in course order, comma-separated
    );
    CREATE TABLE sources (sha256 TEXT PRIMARY KEY, bytes BLOB NOT NULL) WITHOUT ROWID;
    CREATE TABLE cells (
        run INTEGER NOT NULL REFERENCES runs(id),
        student INTEGER NOT NULL REFERENCES students(id),
        exercise TEXT NOT NULL,
        status TEXT NOT NULL,        -- passed, failed, does not compile, not done
        mistake TEXT,
        message TEXT NOT NULL,
        parts_passed INTEGER,
        parts_total INTEGER,
        points REAL NOT NULL,        -- earned, after the late policy
        max_points REAL NOT NULL,
        handed_in TEXT,
        due TEXT,                    -- the student's due date, as graded (an extension's, else the run's)
        late_days INTEGER,
        source TEXT REFERENCES sources(sha256),
        PRIMARY KEY (run, student, exercise)
    ) WITHOUT ROWID;
    CREATE TABLE overrides (
        id INTEGER PRIMARY KEY,
        student INTEGER NOT NULL REFERENCES students(id),
        exercise TEXT NOT NULL,
        points REAL,                 -- NULL: withdrawn, the runs decide again
        comment TEXT NOT NULL,
        by TEXT NOT NULL,
        at TEXT NOT NULL
    );
    CREATE TABLE extensions (
        id INTEGER PRIMARY KEY,
        student INTEGER NOT NULL REFERENCES students(id),
        assignment TEXT NOT NULL,
        due TEXT NOT NULL,           -- the student's own due date
        reason TEXT NOT NULL,
        by TEXT NOT NULL,
        at TEXT NOT NULL
    );
    CREATE TABLE platform_columns (assignment TEXT PRIMARY KEY, canvas TEXT NOT NULL) WITHOUT ROWID;",
    // 2: what a term of a thousand students asks of it — a student's cells, overrides and extensions
    // found without reading every run.
    "CREATE INDEX cells_by_student ON cells (student, exercise, run);
    CREATE INDEX overrides_by_student ON overrides (student, exercise, id);
    CREATE INDEX extensions_by_student ON extensions (student, assignment, id);",
    // 3: which export each student came from ('canvas' or 'csv'): only Canvas's ids may key a file Canvas
    // imports. Students imported before this step are taken as a plain CSV's until a Canvas roster is
    // imported again.
    "ALTER TABLE students ADD COLUMN roster TEXT NOT NULL DEFAULT 'csv';",
    // 4: a student's e-mail (one of the ids Moodle's import can match a row by; '' when the roster gave
    // none), whether the student is Canvas's test student (decided when the roster is imported: 1 keeps it
    // out of the class), and the late penalties an instructor gives a whole assignment where no hand-in time was read
    // (a Canvas download has none): the days late as given, or the hand-in time, counted from the
    // student's own due date when read — both NULL when the penalty is withdrawn.
    "ALTER TABLE students ADD COLUMN email TEXT NOT NULL DEFAULT '';
    ALTER TABLE students ADD COLUMN test_student INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE late_penalties (
        id INTEGER PRIMARY KEY,
        student INTEGER NOT NULL REFERENCES students(id),
        assignment TEXT NOT NULL,
        days INTEGER,
        handed_in TEXT,
        reason TEXT NOT NULL,
        by TEXT NOT NULL,
        at TEXT NOT NULL,
        CHECK (days IS NULL OR handed_in IS NULL)
    );
    CREATE INDEX late_penalties_by_student ON late_penalties (student, assignment, id);",
];

/// The version this grader writes.
pub fn newest() -> i32 {
    MIGRATIONS.len() as i32
}

/// Makes a connection ready: the file checked ([`check`]), WAL, foreign keys, then brought to the newest
/// version.
pub fn prepare(conn: &mut Connection, path: &Path) -> Result<()> {
    let version = check(conn, path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // A run reported as recorded is on the disk: each commit waits for it.
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    migrate(conn, version)
}

/// Reads what a file is, writing nothing: refused when it is not SQLite (the first read fails), is
/// another program's database, was written by a newer grader, is damaged, holds a table, index, trigger or
/// view the grader does not make ([`same_as_ours`]), or values it does not write
/// ([`crate::trust::content`]); else its version.
pub fn check(conn: &Connection, path: &Path) -> Result<i32> {
    let shown = path.display();
    let (id, version): (i32, i32) =
        conn.query_row("SELECT * FROM pragma_application_id, pragma_user_version", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
    if tables > 0 && id != APPLICATION_ID {
        bail!("{shown} is an SQLite database, but not a gradebook: give the gradebook's path (`roster` says where it made it: beside --course FILE, else $ANATOMY_GRADEBOOK, else in your data folder)");
    }
    if version > newest() {
        bail!(
            "the gradebook {shown} was written by a newer version of the grader (gradebook schema {version}; this one knows up to {}): update the project to open it",
            newest()
        );
    }
    let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
    if check != "ok" {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
            Some(check),
        )
        .into());
    }
    same_as_ours(conn, version, path)?;
    crate::trust::content::check(conn, path)?;
    Ok(version)
}

/// The schema as the grader makes it at `version`: each table, index, trigger and view with the SQL that
/// made it, from [`MIGRATIONS`] run in memory.
fn ours(version: i32) -> Result<BTreeSet<(String, String, Option<String>)>> {
    let conn = Connection::open_in_memory()?;
    for step in &MIGRATIONS[..usize::try_from(version).unwrap_or(0)] {
        conn.execute_batch(step)?;
    }
    schema_of(&conn)
}

fn schema_of(conn: &Connection) -> Result<BTreeSet<(String, String, Option<String>)>> {
    let mut query = conn.prepare("SELECT type, name, sql FROM sqlite_schema")?;
    let rows = query.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Refuses a file whose schema is not the grader's own at its version, naming what differs: a trigger or a
/// view (code the grader would run), a table or an index it does not make, or one made otherwise.
pub fn same_as_ours(conn: &Connection, version: i32, path: &Path) -> Result<()> {
    let (file, ours) = (schema_of(conn)?, ours(version)?);
    let named = |set: &BTreeSet<(String, String, Option<String>)>,
                 (kind, name, _): &(String, String, Option<String>)| {
        match set.iter().any(|(k, n, _)| k == kind && n == name) {
            true => format!("the {kind} {name} made otherwise"),
            false => format!("a {kind} {name}"),
        }
    };
    let extra: Vec<String> = file.difference(&ours).map(|s| named(&ours, s)).collect();
    let missing: Vec<String> = ours
        .difference(&file)
        .filter(|(k, n, _)| !file.iter().any(|(fk, f, _)| fk == k && f == n))
        .map(|(k, n, _)| format!("no {k} {n}"))
        .collect();
    if extra.is_empty() && missing.is_empty() {
        return Ok(());
    }
    let differs: Vec<String> = extra.into_iter().chain(missing).collect();
    bail!(
        "the gradebook {} holds what the grader never makes ({}; gradebook schema {version}): a gradebook is data, and this grader runs no trigger or view of a file's own; ask whoever gave it for the file the grader wrote, or restore it from a copy",
        path.display(),
        differs.join(", ")
    )
}

/// A file opened to be read only, at the newest version: the file itself when it is, else a copy of it in
/// memory, migrated there (the file is migrated when it is next written).
pub fn readable(conn: Connection, path: &Path) -> Result<Connection> {
    let version = check(&conn, path)?;
    if version == newest() {
        return Ok(conn);
    }
    let mut copy = Connection::open_in_memory()?;
    crate::trust::harden(&mut copy)?;
    rusqlite::backup::Backup::new(&conn, &mut copy)?.run_to_completion(1024, std::time::Duration::ZERO, None)?;
    migrate(&mut copy, version)?;
    Ok(copy)
}

/// Runs the steps from `version` to the newest, in one transaction.
fn migrate(conn: &mut Connection, version: i32) -> Result<()> {
    if version == newest() {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Another process may have migrated it while this one waited for the lock.
    let now: i32 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let Some(steps) = usize::try_from(now).ok().and_then(|now| MIGRATIONS.get(now..)) else {
        bail!("its schema became version {now} while this grader waited to migrate it (this one knows up to {}): update the project to open it", newest());
    };
    for step in steps {
        tx.execute_batch(step)?;
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID)?;
    tx.pragma_update(None, "user_version", newest())?;
    tx.commit()?;
    Ok(())
}
