//! What an instructor decides by hand, each kept with who, when and why, and never erased: an override
//! of one cell's points (it stands over every run, later ones included, until it is withdrawn), an
//! extension — a student's own due date for an assignment, which the late policy counts from at once: the
//! hand-in times the runs recorded are counted from it whenever the grades are read
//! ([`crate::history`]) — and a late penalty on a whole assignment, where no hand-in time was read.
use std::collections::BTreeMap;

use anyhow::{bail, Result};
use rusqlite::params;
use time::OffsetDateTime;

use anatomy_grade::points::{format_time, Assignment};
use anatomy_report::sheet::Extension;

use crate::roster::Student;
use crate::Gradebook;

mod given;
pub use given::later;
use given::{who_checked, words};

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
        who_checked(by)?;
        if let Some(p) = points {
            // -0 is in 0..=max, but an export would write it "-0": refused with NaN, infinity and negatives.
            if !(p.is_finite() && p.is_sign_positive() && (0.0..=max).contains(&p)) {
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

    /// What a person reads of an override set (`points`) or withdrawn (`None`).
    pub fn override_line(student: &Student, exercise: &str, points: Option<f64>) -> String {
        match points {
            Some(p) => {
                format!("{exercise} of {}: {} points, set by hand", student.label, anatomy_report::sheet::points(p))
            }
            None => format!("{exercise} of {}: the override is withdrawn, the latest run counts", student.label),
        }
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
        who_checked(by)?;
        let Some(class_due) = assignment.due else {
            bail!(
                "the assignment {} has no due date, so nobody is late: give it one (due = \"…\" under [assignments.{}] in the course file)",
                assignment.name,
                assignment.name
            );
        };
        let due = match (due, days) {
            (Some(due), None) => due,
            (None, Some(days)) => later(class_due, days)?,
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

    /// What a person reads of an extension given: the student's own due date, and that it counts at once.
    pub fn extended_line(student: &Student, assignment: &Assignment, due: OffsetDateTime) -> String {
        format!(
            "{} is due {} for {}, counted at once: the hand-in times recorded, and a late penalty given as a time, count from it (no regrading needed)",
            student.label,
            format_time(due),
            assignment.name
        )
    }

    /// The students of `late`'s command line, each with what it gives them ([`late_entry`]).
    pub fn late_entries(&self, given: &[String], clear: bool) -> Result<Vec<(Student, LateMark)>> {
        given
            .iter()
            .map(|text| {
                let (who, lateness) = late_entry(text, clear)?;
                Ok((self.student(&who)?, lateness))
            })
            .collect()
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

/// A late penalty on a whole assignment, as it stands: the days late the instructor gave, or the hand-in
/// time they read (from the platform's own record), counted from the student's own due date — their
/// extension's, else the assignment's — whenever it is read, so that an extension given later counts too.
#[derive(Debug, Clone, PartialEq)]
pub struct LatePenalty {
    pub days: Option<u32>,
    pub handed_in: Option<String>,
    pub reason: String,
    pub by: String,
    pub at: String,
}

impl LatePenalty {
    /// A penalty as the `late_penalties` table keeps it, read from columns 1 to 5 of a row (`days,
    /// handed_in, reason, by, at`; column 0 is the student's or the assignment's, as the query needs).
    pub(crate) fn of_row(r: &rusqlite::Row) -> rusqlite::Result<LatePenalty> {
        Ok(LatePenalty { days: r.get(1)?, handed_in: r.get(2)?, reason: r.get(3)?, by: r.get(4)?, at: r.get(5)? })
    }

    /// The days late it stands for, from the student's own due date; none when a hand-in time has no due
    /// date to count from.
    pub fn days_late(&self, due: Option<OffsetDateTime>) -> Option<u32> {
        match (self.days, self.handed_in.as_deref().and_then(anatomy_intake::times::parse_time)) {
            (Some(days), _) => Some(days),
            (None, Some(at)) => Some(anatomy_grade::points::Late::days(at, due?)),
            (None, None) => None,
        }
    }

    /// How it was given: "2 days late" ("on time" for none) or "handed in 2026-12-03T10:00:00Z".
    pub fn given(&self) -> String {
        match (&self.days, &self.handed_in) {
            (Some(days), _) => late_words(*days),
            (None, Some(at)) => format!("handed in {at}"),
            (None, None) => "withdrawn".into(),
        }
    }
}

/// Days late as a person reads them: "on time", "1 day late", "2 days late".
pub fn late_words(days: u32) -> String {
    match days {
        0 => "on time".into(),
        1 => "1 day late".into(),
        _ => format!("{days} days late"),
    }
}

/// A student's own due date for an assignment: their extension's, else the assignment's.
pub fn own_due(extension: Option<&Extension>, assignment: &Assignment) -> Option<OffsetDateTime> {
    extension.map(|e| e.due).or(assignment.due)
}

/// What `late` gives one student: days late, a hand-in time, or the penalty withdrawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LateMark {
    Days(u32),
    HandedIn(OffsetDateTime),
    Withdrawn,
}

/// The most days late a penalty may give (ten years).
pub const MAX_DAYS: u32 = 3650;

/// One `STUDENT=DAYS` or `STUDENT=TIME` of the command line (only `STUDENT` with `clear`), read.
pub fn late_entry(text: &str, clear: bool) -> Result<(String, LateMark)> {
    if clear {
        return match text.contains('=') {
            false => Ok((text.to_string(), LateMark::Withdrawn)),
            true => bail!("{text:?}: with --clear, name the students only (grace, not grace=2)"),
        };
    }
    let Some((who, value)) = text.rsplit_once('=').filter(|(who, v)| !who.is_empty() && !v.is_empty()) else {
        bail!(
            "{text:?}: give each student with their days late or hand-in time: grace=2 or grace=2026-12-03T10:00:00Z"
        );
    };
    let lateness = match value.parse::<u32>() {
        Ok(days) if days <= MAX_DAYS => LateMark::Days(days),
        Ok(_) => bail!("{text:?}: at most {MAX_DAYS} days late"),
        Err(_) => LateMark::HandedIn(
            anatomy_intake::times::parse_due(value)
                .map_err(|why| anyhow::anyhow!("{text:?}: neither days late nor a hand-in time ({why})"))?,
        ),
    };
    Ok((who.to_string(), lateness))
}

impl Gradebook {
    /// Gives late penalties on a whole assignment, each student's in one transaction with the rest: the
    /// course's late policy then keeps its share of every cell of theirs in it (an override still stands
    /// over its cell). Returns a line per student: what they keep.
    pub fn set_late(
        &mut self,
        course: &anatomy_grade::points::CourseFile,
        assignment: &Assignment,
        given: &[(Student, LateMark)],
        reason: &str,
        by: &str,
    ) -> Result<Vec<String>> {
        words("reason", reason)?;
        who_checked(by)?;
        let policy = course.late;
        if policy.is_none() && given.iter().any(|(_, l)| *l != LateMark::Withdrawn) {
            bail!(
                "the course file has no late policy: add a [late] table (penalty_per_day, max_days) to count days late"
            );
        }
        let extensions = self.extensions(&assignment.name)?;
        let mut lines = Vec::new();
        let mut rows = Vec::new();
        for (student, lateness) in given {
            let due = own_due(extensions.get(&student.key), assignment);
            let (days, handed_in, counted) = match *lateness {
                LateMark::Days(d) => (Some(d), None, Some(d)),
                LateMark::HandedIn(at) => match due {
                    Some(due) => (None, Some(format_time(at)), Some(anatomy_grade::points::Late::days(at, due))),
                    None => bail!(
                        "{} has no due date to count {}'s hand-in time from: give the days late instead ({}=2)",
                        assignment.name,
                        student.label,
                        student.label
                    ),
                },
                LateMark::Withdrawn => (None, None, None),
            };
            lines.push(match (counted, policy) {
                (Some(0), _) => {
                    format!("{} in {}: on time by their own due date, all points kept", student.label, assignment.name)
                }
                (Some(d), Some(policy)) => format!("{} in {}: {}", student.label, assignment.name, policy.words(d)),
                _ => format!(
                    "{} in {}: the late penalty is withdrawn, the runs decide again",
                    student.label, assignment.name
                ),
            });
            rows.push((student.key, days, handed_in));
        }
        self.change(|tx| {
            for (key, days, handed_in) in &rows {
                tx.execute(
                    "INSERT INTO late_penalties (student, assignment, days, handed_in, reason, by, at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![key, assignment.name, days, handed_in, reason, by, crate::now()],
                )?;
            }
            Ok(())
        })?;
        Ok(lines)
    }

    /// The late penalties of an assignment that stand, the latest of each student, by student key.
    pub fn late_penalties(&self, assignment: &str) -> Result<BTreeMap<i64, LatePenalty>> {
        let mut query = self.conn().prepare(
            "SELECT student, days, handed_in, reason, by, at FROM late_penalties WHERE assignment = ?1 ORDER BY id",
        )?;
        let mut standing = BTreeMap::new();
        let rows = query.query_map([assignment], |r| Ok((r.get::<_, i64>(0)?, LatePenalty::of_row(r)?)))?;
        for row in rows {
            let (key, p) = row?;
            match p.days.is_some() || p.handed_in.is_some() {
                true => standing.insert(key, p),
                false => standing.remove(&key),
            };
        }
        Ok(standing)
    }
}
