//! A gradebook is data, never code, wherever it came from: a colleague's file can hold triggers, views,
//! values of any size or type and a journal of a write cut off. Every connection is opened as SQLite
//! advises for a file from elsewhere ([`harden`]): defensive mode, no trusted schema, no triggers or views
//! run, lengths limited, and a statement that runs away stopped. What the file holds is then held to what
//! the grader itself writes: its schema ([`crate::schema::same_as_ours`]) and its values ([`content`]).
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::Result;
use rusqlite::config::DbConfig;
use rusqlite::limits::Limit;
use rusqlite::trace::{TraceEvent, TraceEventCodes};
use rusqlite::Connection;

pub mod content;

/// The longest value SQLite reads or writes: twice the largest notebook a hand-in may be, so that any
/// graded file fits and a 400 MB name is refused before it is read whole.
pub const MAX_LENGTH: i32 = 2 * anatomy_grade::handin::MAX_NOTEBOOK as i32;

/// How many virtual-machine steps one statement may take: some hundred times what a term of a thousand
/// students asks of the largest one, so that only a runaway statement reaches it.
pub const MAX_STEPS: u64 = 2_000_000_000;

/// The steps between two looks of the progress handler.
const STEPS_PER_LOOK: u64 = 10_000;

/// The work of the statement running now, counted by the progress handler and started again by each
/// statement's first step; a statement past `limit` steps is interrupted.
#[derive(Debug)]
pub struct Watch {
    steps: AtomicU64,
    pub(crate) limit: AtomicU64,
}

/// Opens `conn` to a file from elsewhere, before it reads a byte of it: defensive mode (no writing the
/// schema by hand, no journal turned off), `trusted_schema` off, triggers and views never run (this grader
/// makes neither), SQLite's limits on lengths, columns and depth, and a watch that interrupts a statement
/// past [`MAX_STEPS`].
pub fn harden(conn: &mut Connection) -> Result<Arc<Watch>> {
    for (config, on) in [
        (DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true),
        (DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false),
        (DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false),
        (DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW, false),
    ] {
        conn.set_db_config(config, on)?;
    }
    conn.pragma_update(None, "trusted_schema", "OFF")?;
    for (limit, most) in [
        (Limit::SQLITE_LIMIT_LENGTH, MAX_LENGTH),
        (Limit::SQLITE_LIMIT_SQL_LENGTH, 100_000),
        (Limit::SQLITE_LIMIT_COLUMN, 100),
        (Limit::SQLITE_LIMIT_EXPR_DEPTH, 100),
        (Limit::SQLITE_LIMIT_COMPOUND_SELECT, 10),
        (Limit::SQLITE_LIMIT_VDBE_OP, 100_000),
        (Limit::SQLITE_LIMIT_ATTACHED, 0),
        (Limit::SQLITE_LIMIT_TRIGGER_DEPTH, 1),
    ] {
        conn.set_limit(limit, most)?;
    }
    let watch = Arc::new(Watch { steps: AtomicU64::new(0), limit: AtomicU64::new(MAX_STEPS) });
    let started = Arc::clone(&watch);
    conn.trace_v2(
        TraceEventCodes::SQLITE_TRACE_STMT,
        Some(move |_: TraceEvent<'_>| started.steps.store(0, Ordering::Relaxed)),
    )?;
    let counted = Arc::clone(&watch);
    conn.progress_handler(
        STEPS_PER_LOOK as i32,
        Some(move || {
            let steps = counted.steps.fetch_add(STEPS_PER_LOOK, Ordering::Relaxed) + STEPS_PER_LOOK;
            steps > counted.limit.load(Ordering::Relaxed)
        }),
    )?;
    Ok(watch)
}

/// Whether an error is the watch's interruption.
pub fn interrupted(e: &anyhow::Error) -> bool {
    let code = e.downcast_ref::<rusqlite::Error>().and_then(|e| e.sqlite_error_code());
    code == Some(rusqlite::ErrorCode::OperationInterrupted)
}
