//! What an instructor decides by hand, each kept with who, when and why, and never erased: an override
//! of one cell's points (it stands over every run, later ones included, until it is withdrawn), and an
//! extension — a student's own due date for an assignment, which the late policy counts from when the
//! student is next graded.
use std::collections::BTreeMap;

use anyhow::{bail, Result};
use rusqlite::params;
use time::OffsetDateTime;

use anatomy_grade::points::{format_time, Assignment};
use anatomy_report::sheet::Extension;

use crate::roster::Student;
use crate::Gradebook;

/// An override as it stands: the points (none when withdrawn) and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    pub points: Option<f64>,
    pub comment: String,
    pub by: String,
    pub at: String,
}

/// The most characters of a comment or a reason.
pub const MAX_WORDS: usize = 2000;

/// Who is making a change: `--by`, else the login of whoever runs the command.
pub fn who(by: Option<String>) -> String {
    by.or_else(|| std::env::var("USER").ok()).filter(|b| !b.trim().is_empty()).unwrap_or_else(|| "unknown".into())
}

fn words(what: &str, text: &str) -> Result<()> {
    if text.trim().is_empty() {
        bail!("say why: give the {what} (it is kept with the change, for the audit trail)");
    }
    if text.chars().count() > MAX_WORDS || text.chars().any(|c| c.is_control() && c != '\n') {
        bail!("the {what} must be text of at most {MAX_WORDS} characters, without control characters");
    }
    Ok(())
}

impl Gradebook {
    /// Overrides one cell: `points` (of at most the exercise's `max`), or `None` to withdraw the override
    /// so that the runs decide again.
    pub fn set_override(
        &mut self,
        student: &Student,
        exercise: &str,
        points: Option<f64>,
        max: f64,
        comment: &str,
        by: &str,
    ) -> Result<()> {
        words("comment", comment)?;
        if let Some(p) = points {
            if !(p.is_finite() && (0.0..=max).contains(&p)) {
                bail!("--points {p}: give a number from 0 to {max}, the most {exercise} is worth");
            }
        }
        self.change(|tx| {
            tx.execute(
                "INSERT INTO overrides (student, exercise, points, comment, by, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![student.key, exercise, points, comment, by, crate::now()],
            )?;
            Ok(())
        })
    }

    /// The overrides that stand, by student key and exercise.
    pub fn overrides(&self) -> Result<BTreeMap<(i64, String), Override>> {
        let mut query =
            self.conn().prepare("SELECT student, exercise, points, comment, by, at FROM overrides ORDER BY id")?;
        let mut standing = BTreeMap::new();
        let rows = query.query_map([], |r| {
            let o = Override { points: r.get(2)?, comment: r.get(3)?, by: r.get(4)?, at: r.get(5)? };
            Ok(((r.get::<_, i64>(0)?, r.get::<_, String>(1)?), o))
        })?;
        for row in rows {
            let (key, o) = row?;
            match o.points {
                Some(_) => standing.insert(key, o),
                None => standing.remove(&key),
            };
        }
        Ok(standing)
    }

    /// Gives a student their own due date for an assignment: `due`, or `days` after the assignment's. An
    /// assignment without a due date has no lateness to extend.
    pub fn extend(
        &mut self,
        student: &Student,
        assignment: &Assignment,
        due: Option<OffsetDateTime>,
        days: Option<u32>,
        reason: &str,
        by: &str,
    ) -> Result<OffsetDateTime> {
        words("reason", reason)?;
        let Some(class_due) = assignment.due else {
            bail!(
                "the assignment {} has no due date, so nobody is late: give it one (due = \"…\" under [assignments.{}] in the course file)",
                assignment.name,
                assignment.name
            );
        };
        let due = match (due, days) {
            (Some(due), None) => due,
            (None, Some(days)) => class_due + time::Duration::days(days.into()),
            _ => bail!("give the new due date either as --due DATE or as --days N after the assignment's"),
        };
        self.change(|tx| {
            tx.execute(
                "INSERT INTO extensions (student, assignment, due, reason, by, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![student.key, assignment.name, format_time(due), reason, by, crate::now()],
            )?;
            Ok(())
        })?;
        Ok(due)
    }

    /// The extensions of an assignment, the latest of each student, by student key.
    pub fn extensions(&self, assignment: &str) -> Result<BTreeMap<i64, Extension>> {
        let mut query =
            self.conn().prepare("SELECT student, due, reason FROM extensions WHERE assignment = ?1 ORDER BY id")?;
        let mut latest = BTreeMap::new();
        for row in query.query_map([assignment], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get(2)?)))? {
            let (key, due, reason) = row?;
            if let Some(due) = anatomy_intake::times::parse_time(&due) {
                latest.insert(key, Extension { due, reason });
            }
        }
        Ok(latest)
    }
}
