//! A gradebook's values held to what the grader writes, before any command reads one: each column's type,
//! its length (read from the record's header, so a 400 MB name is measured, never loaded) and, for points
//! and counts, their range — points finite and never negative — and every row's student, run and file
//! found. A file that holds anything else is refused in one line that names the table and column, so that
//! no command later fails on a value ("Invalid column type Text") or writes one to an export.
use std::path::Path;

use anyhow::{bail, Result};
use rusqlite::Connection;

/// The longest short text (a name, an id, a login, a comment): far above what a roster or a command gives.
pub const SHORT: i64 = 64 << 10;
/// The longest message or mistake of a cell, and a run's list of exercises.
pub const LONG: i64 = 1 << 20;
/// The most points a cell or an override may hold; infinity is above it.
pub const MAX_POINTS: f64 = 1e9;

/// What a column may hold.
#[derive(Debug, Clone, Copy)]
enum Rule {
    /// Text of at most so many bytes.
    Text(i64),
    /// An integer in this range.
    Int(i64, i64),
    /// A number from 0 to [`MAX_POINTS`].
    Points,
    /// A blob of at most SQLite's own limit on a value ([`super::MAX_LENGTH`]).
    Blob,
}

use Rule::*;

/// A column: its name, what it holds, and whether it may be NULL.
type Column = (&'static str, Rule, bool);

/// Each column the grader writes, by table. Columns a file's older schema lacks are skipped.
const COLUMNS: &[(&str, &[Column])] = &[
    (
        "students",
        &[
            ("id", Int(i64::MIN, i64::MAX), false),
            ("name", Text(SHORT), false),
            ("lms_id", Text(SHORT), false),
            ("sis_id", Text(SHORT), false),
            ("login", Text(SHORT), false),
            ("section", Text(SHORT), false),
            ("label", Text(SHORT), false),
            ("roster", Text(SHORT), false),
            ("email", Text(SHORT), false),
            ("test_student", Int(0, 1), false),
        ],
    ),
    (
        "runs",
        &[
            ("at", Text(SHORT), false),
            ("grader", Text(SHORT), false),
            ("seed", Int(i64::MIN, i64::MAX), false),
            ("tier", Text(SHORT), false),
            ("assignment", Text(SHORT), false),
            ("due", Text(SHORT), true),
            ("exercises", Text(LONG), false),
        ],
    ),
    ("sources", &[("sha256", Text(64), false), ("bytes", Blob, false)]),
    (
        "cells",
        &[
            ("run", Int(i64::MIN, i64::MAX), false),
            ("student", Int(i64::MIN, i64::MAX), false),
            ("exercise", Text(SHORT), false),
            ("status", Text(SHORT), false),
            ("mistake", Text(LONG), true),
            ("message", Text(LONG), false),
            ("parts_passed", Int(0, 1_000_000), true),
            ("parts_total", Int(0, 1_000_000), true),
            ("points", Points, false),
            ("max_points", Points, false),
            ("handed_in", Text(SHORT), true),
            ("due", Text(SHORT), true),
            ("late_days", Int(0, u32::MAX as i64), true),
            ("source", Text(64), true),
        ],
    ),
    (
        "overrides",
        &[
            ("student", Int(i64::MIN, i64::MAX), false),
            ("exercise", Text(SHORT), false),
            ("points", Points, true),
            ("comment", Text(SHORT), false),
            ("by", Text(SHORT), false),
            ("at", Text(SHORT), false),
        ],
    ),
    (
        "extensions",
        &[
            ("student", Int(i64::MIN, i64::MAX), false),
            ("assignment", Text(SHORT), false),
            ("due", Text(SHORT), false),
            ("reason", Text(SHORT), false),
            ("by", Text(SHORT), false),
            ("at", Text(SHORT), false),
        ],
    ),
    ("platform_columns", &[("assignment", Text(SHORT), false), ("canvas", Text(SHORT), false)]),
    (
        "late_penalties",
        &[
            ("student", Int(i64::MIN, i64::MAX), false),
            ("assignment", Text(SHORT), false),
            ("days", Int(0, u32::MAX as i64), true),
            ("handed_in", Text(SHORT), true),
            ("reason", Text(SHORT), false),
            ("by", Text(SHORT), false),
            ("at", Text(SHORT), false),
        ],
    ),
];

/// The SQL condition a column's value meets when it is as the grader writes it.
fn condition(column: &str, rule: Rule, null: bool) -> String {
    let c = format!("\"{column}\"");
    let held = match rule {
        Text(most) => format!("typeof({c}) = 'text' AND octet_length({c}) <= {most}"),
        Int(least, most) => format!("typeof({c}) = 'integer' AND {c} BETWEEN {least} AND {most}"),
        Points => format!("typeof({c}) IN ('integer', 'real') AND {c} >= 0 AND {c} <= {MAX_POINTS:.1}"),
        Blob => format!("typeof({c}) = 'blob' AND octet_length({c}) <= {}", super::MAX_LENGTH),
    };
    match null {
        true => format!("({c} IS NULL OR ({held}))"),
        false => format!("({held})"),
    }
}

/// What a value is, as a person reads it beside what the grader writes.
fn described(conn: &Connection, table: &str, column: &str, rule: Rule, null: bool) -> Result<String> {
    let c = format!("\"{column}\"");
    let (kind, bytes, number): (String, Option<i64>, Option<f64>) = conn.query_row(
        &format!(
            "SELECT typeof({c}), octet_length({c}), CASE WHEN typeof({c}) IN ('integer', 'real') THEN {c} END
             FROM \"{table}\" WHERE NOT {} LIMIT 1",
            condition(column, rule, null)
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let wanted = match rule {
        Text(most) => format!("text of at most {most} bytes"),
        Int(least, most) => format!("a whole number from {least} to {most}"),
        Points => format!("points from 0 to {MAX_POINTS}"),
        Blob => format!("a file's bytes, at most {}", super::MAX_LENGTH),
    };
    Ok(match (kind.as_str(), bytes, number) {
        ("null", _, _) => format!("no value where the grader writes {wanted}"),
        ("text", Some(n), _) if matches!(rule, Text(_)) => {
            format!("a text of {n} bytes where the grader writes {wanted}")
        }
        ("blob", Some(n), _) if matches!(rule, Blob) => format!("{n} bytes where the grader writes {wanted}"),
        (_, _, Some(x)) if !matches!(rule, Text(_) | Blob) => format!("{x} where the grader writes {wanted}"),
        (kind, _, _) => format!("a value of type {kind} where the grader writes {wanted}"),
    })
}

/// Refuses a file whose values are not as the grader writes them, or whose rows refer to a student, run
/// or file it does not hold; reads each table once, writing nothing.
pub fn check(conn: &Connection, path: &Path) -> Result<()> {
    let shown = path.display();
    let fix = "it is not a gradebook as the grader writes it: ask whoever gave it for the file the grader wrote, or restore it from a copy";
    for (table, columns) in COLUMNS {
        let mut present = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
        let present: Vec<String> = present.query_map([table], |r| r.get(0))?.collect::<Result<_, _>>()?;
        let columns: Vec<_> = columns.iter().filter(|(c, _, _)| present.iter().any(|p| p == c)).collect();
        if columns.is_empty() {
            continue;
        }
        let cases: String = columns
            .iter()
            .map(|&&(c, rule, null)| format!(" WHEN NOT {} THEN '{c}'", condition(c, rule, null)))
            .collect();
        let sql =
            format!("SELECT bad FROM (SELECT CASE{cases} END AS bad FROM \"{table}\") WHERE bad IS NOT NULL LIMIT 1");
        let bad: Option<String> = rusqlite::OptionalExtension::optional(conn.query_row(&sql, [], |r| r.get(0)))?;
        if let Some(bad) = bad {
            let &&(column, rule, null) = columns.iter().find(|(c, _, _)| *c == bad).expect("a column of the list");
            let what = described(conn, table, column, rule, null)?;
            bail!("the gradebook {shown} holds {what} in {table}.{column}: {fix}");
        }
    }
    let orphan: Option<(String, String)> = rusqlite::OptionalExtension::optional(conn.query_row(
        "SELECT \"table\", parent FROM pragma_foreign_key_check LIMIT 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    ))?;
    if let Some((table, parent)) = orphan {
        bail!("the gradebook {shown} holds a row of {table} that refers to no row of {parent}: {fix}");
    }
    Ok(())
}
