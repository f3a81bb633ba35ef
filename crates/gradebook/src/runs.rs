//! Grading runs, recorded whole and never overwritten: when, by which grader, with which seed and sandbox,
//! for which assignment, and every cell — a student's exercise — with its outcome, mistake, points, late
//! days and the bytes that were graded (kept once, by their SHA-256). A student's current grade for an
//! exercise is its cell in the latest run of that assignment that graded it, unless an instructor's
//! override stands ([`crate::adjust`]).
use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use rusqlite::params;
use sha2::{Digest, Sha256};

use anatomy_course::{Exercise, Outcome, Status};
use anatomy_grade::grading::Source;
use anatomy_grade::points::format_time;
use anatomy_report::sheet::{Row, Sheet};

use crate::Gradebook;

/// One grading run, ready to be recorded.
#[derive(Debug, Clone)]
pub struct Run {
    pub assignment: String,
    pub due: Option<String>,
    pub grader: String,
    pub seed: i64,
    pub tier: String,
    pub exercises: Vec<&'static str>,
    pub cells: Vec<GradeCell>,
}

/// One student's exercise in a run.
#[derive(Debug, Clone, PartialEq)]
pub struct GradeCell {
    /// The student's key in the gradebook.
    pub student: i64,
    pub exercise: String,
    pub status: Status,
    pub mistake: Option<String>,
    pub message: String,
    pub parts: Option<(usize, usize)>,
    /// Earned, after the late policy.
    pub points: f64,
    pub max_points: f64,
    pub handed_in: Option<String>,
    /// The student's due date as graded: their extension's, else the run's.
    pub due: Option<String>,
    pub late_days: Option<u32>,
    /// The bytes graded, when the file could be read.
    pub source: Option<Vec<u8>>,
}

impl Run {
    /// A run from a class graded by the grader: `rows` with each student's key and the bytes graded for
    /// each of their exercises, under the grade sheet that gave their points.
    pub fn of(assignment: &str, sheet: &Sheet, students: &[(i64, &Row, &[Source])], seed: i64, grader: &str) -> Run {
        let mut cells = Vec::new();
        for (key, row, sources) in students {
            for (o, source) in row.outcomes.iter().zip(sources.iter()) {
                cells.push(GradeCell {
                    student: *key,
                    exercise: o.name.to_string(),
                    status: o.status,
                    mistake: o.mistake.clone(),
                    message: o.message.clone(),
                    parts: o.parts,
                    points: sheet.earned(row, o),
                    max_points: sheet.course.max(o.name),
                    handed_in: row.handed_in.map(format_time),
                    due: sheet.due_of(row).map(format_time),
                    late_days: sheet.days_late(row),
                    source: source.as_ref().ok().cloned(),
                });
            }
        }
        Run {
            assignment: assignment.to_string(),
            due: sheet.due.map(format_time),
            grader: grader.to_string(),
            seed,
            tier: sheet.tier.name().to_string(),
            exercises: sheet.chosen.iter().map(|e| e.name).collect(),
            cells,
        }
    }
}

/// A cell as the gradebook keeps it, with the run that gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCell {
    pub run: i64,
    /// When that run was recorded.
    pub at: String,
    pub cell: GradeCell,
    /// The SHA-256 of the bytes graded.
    pub source: Option<String>,
    /// That run's due date for the class (the cell's own is the student's).
    pub run_due: Option<String>,
}

impl Gradebook {
    /// Records a run in one transaction, and returns its number: all its cells are kept, or none. A file
    /// is kept by its SHA-256, and a row already under that hash holding other bytes (a file changed outside
    /// the grader) is given the graded bytes, never taken as them. Points that are not a finite number of
    /// at least 0 are refused before anything is written, and -0 is written as 0.
    pub fn record(&mut self, run: &Run) -> Result<i64> {
        for c in &run.cells {
            if ![c.points, c.max_points].iter().all(|p| p.is_finite() && *p >= 0.0) {
                bail!(
                    "the run of {} gives {} {} of {} points, and points are a finite number of at least 0: check the course file's points and [late] policy; nothing was recorded",
                    run.assignment, c.exercise, c.points, c.max_points
                );
            }
        }
        self.change(|tx| {
            tx.execute(
                "INSERT INTO runs (at, grader, seed, tier, assignment, due, exercises) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![crate::now(), run.grader, run.seed, run.tier, run.assignment, run.due, run.exercises.join(",")],
            )?;
            let id = tx.last_insert_rowid();
            let mut source = tx.prepare_cached("INSERT INTO sources (sha256, bytes) VALUES (?1, ?2)
                 ON CONFLICT (sha256) DO UPDATE SET bytes = excluded.bytes WHERE bytes IS NOT excluded.bytes")?;
            let mut cell = tx.prepare_cached(
                "INSERT INTO cells (run, student, exercise, status, mistake, message, parts_passed, parts_total,
                 points, max_points, handed_in, due, late_days, source)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?;
            for c in &run.cells {
                let sha = c.source.as_ref().map(|bytes| {
                    let sha = format!("{:x}", Sha256::digest(bytes));
                    source.execute(params![sha, bytes]).map(|_| sha)
                });
                let sha = sha.transpose()?;
                cell.execute(params![
                    id,
                    c.student,
                    c.exercise,
                    c.status.words(),
                    c.mistake,
                    c.message,
                    c.parts.map(|p| p.0 as i64),
                    c.parts.map(|p| p.1 as i64),
                    c.points + 0.0,
                    c.max_points + 0.0,
                    c.handed_in,
                    c.due,
                    c.late_days,
                    sha,
                ])?;
            }
            Ok(id)
        })
    }

    /// The latest recorded cell of each student and exercise of an assignment, by student key and
    /// exercise name.
    pub fn latest_cells(&self, assignment: &str) -> Result<BTreeMap<(i64, String), RecordedCell>> {
        let mut query = self.conn().prepare(&format!("{CELL} WHERE r.assignment = ?1 ORDER BY c.run"))?;
        let mut latest = BTreeMap::new();
        for r in query.query_map([assignment], recorded)? {
            let r = r?;
            latest.insert((r.cell.student, r.cell.exercise.clone()), r);
        }
        Ok(latest)
    }

    /// The bytes graded, by SHA-256, hashed again: bytes that are not the file the hash names (a gradebook
    /// changed outside the grader) are refused, never shown as what a student handed in.
    pub fn source(&self, sha256: &str) -> Result<Vec<u8>> {
        let shown = self.path().display();
        let bytes: Vec<u8> = self
            .conn()
            .query_row("SELECT bytes FROM sources WHERE sha256 = ?1", [sha256], |r| r.get(0))
            .with_context(|| format!("the gradebook {shown} has no file {sha256}"))?;
        if format!("{:x}", Sha256::digest(&bytes)) != sha256 {
            bail!(
                "the gradebook {shown} holds other bytes under the SHA-256 {sha256} than the file it names: it was changed outside the grader; grade the assignment again to keep the files graded, or restore the gradebook from a copy"
            );
        }
        Ok(bytes)
    }

    /// How many runs are recorded.
    pub fn runs(&self) -> Result<i64> {
        Ok(self.conn().query_row("SELECT count(*) FROM runs", [], |r| r.get(0))?)
    }
}

/// The columns [`recorded`] reads, from `cells c JOIN runs r`.
pub(crate) const CELL: &str =
    "SELECT c.run, r.at, c.student, c.exercise, c.status, c.mistake, c.message, c.parts_passed,
    c.parts_total, c.points, c.max_points, c.handed_in, c.due, c.late_days, c.source, r.due
    FROM cells c JOIN runs r ON r.id = c.run";

pub(crate) fn recorded(r: &rusqlite::Row) -> rusqlite::Result<RecordedCell> {
    let status: String = r.get(4)?;
    let parts: (Option<i64>, Option<i64>) = (r.get(7)?, r.get(8)?);
    Ok(RecordedCell {
        run: r.get(0)?,
        at: r.get(1)?,
        cell: GradeCell {
            student: r.get(2)?,
            exercise: r.get(3)?,
            status: Status::ALL.into_iter().find(|s| s.words() == status).unwrap_or(Status::Failed),
            mistake: r.get(5)?,
            message: r.get(6)?,
            parts: match parts {
                (Some(p), Some(t)) => Some((p as usize, t as usize)),
                _ => None,
            },
            points: r.get(9)?,
            max_points: r.get(10)?,
            handed_in: r.get(11)?,
            due: r.get(12)?,
            late_days: r.get(13)?,
            source: None,
        },
        source: r.get(14)?,
        run_due: r.get(15)?,
    })
}

impl RecordedCell {
    /// The cell as an outcome, as the grade sheet and the report read one.
    pub fn outcome(&self, exercise: &'static Exercise, label: &str) -> Outcome {
        Outcome {
            name: exercise.name,
            label: format!("{label}/{}", exercise.name),
            status: self.cell.status,
            message: self.cell.message.clone(),
            parts: self.cell.parts,
            mistake: self.cell.mistake.clone(),
            output: None,
        }
    }
}
