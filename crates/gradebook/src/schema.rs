//! The gradebook's schema, versioned: [`MIGRATIONS`] holds every version's step, in order, and a file's
//! version is SQLite's `user_version`. Opening a file at an older version runs the missing steps in one
//! transaction; a newer file is refused (this grader would not know its tables). The file is marked as
//! ours by SQLite's `application_id`, so that another program's database is refused rather than changed.
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
];

/// The version this grader writes.
pub fn newest() -> i32 {
    MIGRATIONS.len() as i32
}

/// Makes a connection ready: WAL, foreign keys, then the file checked and brought to the newest version.
pub fn prepare(conn: &mut Connection) -> Result<()> {
    // Reading the schema is the first read: a file that is not SQLite fails here.
    let (id, version): (i32, i32) =
        conn.query_row("SELECT * FROM pragma_application_id, pragma_user_version", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
    if tables > 0 && id != APPLICATION_ID {
        bail!("it is an SQLite database, but not a gradebook: give the gradebook's path (it is created beside the course file)");
    }
    if version > newest() {
        bail!(
            "it was written by a newer version of the grader (gradebook schema {version}; this one knows up to {}): update the project to open it",
            newest()
        );
    }
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // A run reported as recorded is on the disk: each commit waits for it.
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
    if check != "ok" {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
            Some(check),
        )
        .into());
    }
    migrate(conn, version)
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
