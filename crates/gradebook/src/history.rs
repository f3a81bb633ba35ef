//! The current grades, and how each came to be. A student's current grade for an exercise is the cell of
//! the latest run of its assignment that graded it, unless an override stands; an assignment's grade is
//! the sum over its exercises, and a student never graded and never overridden has none (an export leaves
//! the cell empty). The history of a student is every run that graded them, every override and every
//! extension, in the order they were recorded.
use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::params;

use anatomy_course::Exercise;
use anatomy_grade::points::Assignment;
use anatomy_report::sheet::{points, Extension, Row};

use crate::adjust::Override;
use crate::roster::Student;
use crate::runs::{recorded, Recorded, CELL};
use crate::{to_the_second, Gradebook};

/// One exercise of a student, as it stands.
#[derive(Debug, Clone)]
pub struct Current {
    pub exercise: &'static Exercise,
    /// The latest run's cell.
    pub graded: Option<Recorded>,
    /// An override that stands over it.
    pub overridden: Option<Override>,
}

impl Current {
    /// The points that count: the override's, else the latest run's; none when neither exists.
    pub fn points(&self) -> Option<f64> {
        self.overridden.as_ref().and_then(|o| o.points).or(self.graded.as_ref().map(|g| g.cell.points))
    }
}

/// A student's standing in one assignment.
#[derive(Debug, Clone)]
pub struct Standing {
    pub student: Student,
    pub cells: Vec<Current>,
    pub extension: Option<Extension>,
}

impl Standing {
    /// The assignment's points: the sum of the cells that have any, none when no cell has.
    pub fn total(&self) -> Option<f64> {
        let counted: Vec<f64> = self.cells.iter().filter_map(Current::points).collect();
        (!counted.is_empty()).then(|| (counted.iter().sum::<f64>() * 100.0).round() / 100.0)
    }

    /// The most late days of its graded cells.
    pub fn late_days(&self) -> Option<u32> {
        self.cells.iter().filter_map(|c| c.graded.as_ref()?.cell.late_days).max()
    }

    /// The row the grade sheet and the class report read: the latest run's outcomes (an exercise never
    /// graded is not done), with the hand-in time and due date as the latest of those runs recorded them —
    /// not today's extension, which counts only from the student's next grading. `due` is the page's due
    /// date: a student held to another (an extension, or an earlier run's date) gets it as their own.
    /// `None` for a student never graded. (When a student's cells come from runs that saw different
    /// hand-in times, the row holds the latest's: a row has one time.)
    pub fn row(&self, due: Option<&str>) -> Option<Row> {
        let latest = self.cells.iter().filter_map(|c| c.graded.as_ref()).max_by_key(|g| g.run)?;
        let outcomes = self
            .cells
            .iter()
            .map(|c| match &c.graded {
                Some(g) => g.outcome(c.exercise, &self.student.label),
                None => anatomy_course::Outcome {
                    name: c.exercise.name,
                    label: format!("{}/{}", self.student.label, c.exercise.name),
                    status: anatomy_course::Status::NotDone,
                    message: "not graded yet".into(),
                    parts: None,
                    mistake: None,
                },
            })
            .collect();
        let handed_in = latest.cell.handed_in.as_deref().and_then(anatomy_intake::times::parse_time);
        // Held to a due date other than the page's: their extension's, or the date their run had.
        let extension = match latest.cell.due.as_deref() {
            Some(own) if Some(own) != due => anatomy_intake::times::parse_time(own).map(|at| Extension {
                due: at,
                reason: match &self.extension {
                    Some(e) if anatomy_grade::points::format_time(e.due) == own => e.reason.clone(),
                    _ if Some(own) == latest.run_due.as_deref() => format!("the due date of run {}", latest.run),
                    _ => "as graded (the extension has changed since)".into(),
                },
            }),
            _ => None,
        };
        Some(Row { student: self.student.label.clone(), outcomes, handed_in, extension })
    }
}

/// One entry of a student's history.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Graded { run: i64, at: String, grader: String, seed: i64, tier: String, assignment: String, cells: Vec<Recorded> },
    Overridden { exercise: String, change: Override },
    Extended { assignment: String, due: String, reason: String, by: String, at: String },
}

impl Event {
    fn at(&self) -> &str {
        match self {
            Event::Graded { at, .. } | Event::Extended { at, .. } => at,
            Event::Overridden { change, .. } => &change.at,
        }
    }

    /// The event as one line.
    pub fn line(&self) -> String {
        match self {
            Event::Graded { run, at, grader, seed, tier, assignment, cells } => {
                let cells: Vec<String> = cells
                    .iter()
                    .map(|r| {
                        let c = &r.cell;
                        let mistake = c.mistake.as_ref().map(|m| format!(" ({m})")).unwrap_or_default();
                        let late =
                            c.late_days.filter(|&d| d > 0).map(|d| format!(", {d} days late")).unwrap_or_default();
                        format!(
                            "{} {}{mistake} {}/{}{late}",
                            c.exercise,
                            c.status.words(),
                            points(c.points),
                            points(c.max_points)
                        )
                    })
                    .collect();
                format!(
                    "{}  run {run} of {assignment} ({grader}, seed {seed}, {tier}): {}",
                    to_the_second(at),
                    cells.join("; ")
                )
            }
            Event::Overridden { exercise, change } => match change.points {
                Some(p) => format!(
                    "{}  override of {exercise}: {} points, by {}: {}",
                    to_the_second(&change.at),
                    points(p),
                    change.by,
                    change.comment
                ),
                None => format!(
                    "{}  override of {exercise} withdrawn by {}: {}",
                    to_the_second(&change.at),
                    change.by,
                    change.comment
                ),
            },
            Event::Extended { assignment, due, reason, by, at } => {
                format!("{}  extension of {assignment} to {due}, by {by}: {reason}", to_the_second(at))
            }
        }
    }
}

impl Gradebook {
    /// Every student of the roster in one assignment, by label.
    pub fn standings(&self, assignment: &Assignment) -> Result<Vec<Standing>> {
        let latest = self.latest_cells(&assignment.name)?;
        let overrides = self.overrides()?;
        let extensions = self.extensions(&assignment.name)?;
        let standings = self
            .students()?
            .into_iter()
            .map(|student| {
                let cells = assignment
                    .exercises
                    .iter()
                    .map(|&e| {
                        let key = (student.key, e.name.to_string());
                        Current {
                            exercise: e,
                            graded: latest.get(&key).cloned(),
                            overridden: overrides.get(&key).cloned(),
                        }
                    })
                    .collect();
                let extension = extensions.get(&student.key).cloned();
                Standing { student, cells, extension }
            })
            .collect();
        Ok(standings)
    }

    /// A student's history, oldest first.
    pub fn history(&self, student: &Student) -> Result<Vec<Event>> {
        let conn = self.conn();
        let mut runs: BTreeMap<i64, Vec<Recorded>> = BTreeMap::new();
        let mut cells = conn.prepare(&format!("{CELL} WHERE c.student = ?1 ORDER BY c.run, c.exercise"))?;
        for r in cells.query_map([student.key], recorded)? {
            let r = r?;
            runs.entry(r.run).or_default().push(r);
        }
        let mut events = Vec::new();
        let mut run = conn.prepare("SELECT at, grader, seed, tier, assignment FROM runs WHERE id = ?1")?;
        for (id, cells) in runs {
            events.push(run.query_row(params![id], |r| {
                Ok(Event::Graded {
                    run: id,
                    at: r.get(0)?,
                    grader: r.get(1)?,
                    seed: r.get(2)?,
                    tier: r.get(3)?,
                    assignment: r.get(4)?,
                    cells: cells.clone(),
                })
            })?);
        }
        let mut overrides =
            conn.prepare("SELECT exercise, points, comment, by, at FROM overrides WHERE student = ?1 ORDER BY id")?;
        for o in overrides.query_map([student.key], |r| {
            let change = Override { points: r.get(1)?, comment: r.get(2)?, by: r.get(3)?, at: r.get(4)? };
            Ok(Event::Overridden { exercise: r.get(0)?, change })
        })? {
            events.push(o?);
        }
        let mut extensions =
            conn.prepare("SELECT assignment, due, reason, by, at FROM extensions WHERE student = ?1 ORDER BY id")?;
        for e in extensions.query_map([student.key], |r| {
            Ok(Event::Extended {
                assignment: r.get(0)?,
                due: r.get(1)?,
                reason: r.get(2)?,
                by: r.get(3)?,
                at: r.get(4)?,
            })
        })? {
            events.push(e?);
        }
        // Each change's time is kept to the microsecond, so this is the order they were made in (by the
        // time it names, not its text: an older file's times have no fixed width).
        events.sort_by_key(|e| anatomy_intake::times::parse_time(e.at()));
        Ok(events)
    }
}

impl Gradebook {
    /// The current grades as a Markdown table, one row per student: with an assignment, each of its
    /// exercises (an overridden cell marked `*`) and its total; without, each assignment's total.
    pub fn show(&self, course: &anatomy_grade::points::CourseFile, assignment: Option<&Assignment>) -> Result<String> {
        // One snapshot: every assignment's standings list the same students in the same order.
        let snapshot = self.conn().unchecked_transaction()?;
        self.require_roster()?;
        let label = |s: &Standing| anatomy_intake::names::markdown(&s.student.label);
        let cell = |p: Option<f64>| p.map(points).unwrap_or_else(|| "–".into());
        let mut text = String::new();
        match assignment {
            Some(a) => {
                let names: Vec<&str> = a.exercises.iter().map(|e| e.name).collect();
                text += &format!(
                    "| student | {} | {} |\n|---|{}---|\n",
                    names.join(" | "),
                    a.name,
                    "---|".repeat(names.len())
                );
                for s in self.standings(a)? {
                    let cells: Vec<String> = s
                        .cells
                        .iter()
                        .map(|c| cell(c.points()) + if c.overridden.is_some() { "*" } else { "" })
                        .collect();
                    text += &format!("| {} | {} | {} |\n", label(&s), cells.join(" | "), cell(s.total()));
                }
            }
            None => {
                let all = course.all_assignments();
                let standings = all.iter().map(|a| self.standings(a)).collect::<Result<Vec<_>>>()?;
                let names: Vec<&str> = all.iter().map(|a| a.name.as_str()).collect();
                text += &format!("| student | {} |\n|---|{}\n", names.join(" | "), "---|".repeat(names.len()));
                for i in 0..standings.first().map_or(0, Vec::len) {
                    let totals: Vec<String> = standings.iter().map(|s| cell(s[i].total())).collect();
                    text += &format!("| {} | {} |\n", label(&standings[0][i]), totals.join(" | "));
                }
            }
        }
        snapshot.finish()?;
        Ok(text)
    }
}
