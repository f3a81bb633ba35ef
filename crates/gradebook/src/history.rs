//! The current grades, and how each came to be. A student's current grade for an exercise is the cell of
//! the latest run of its assignment that graded it, unless an override stands; an assignment's grade is
//! the sum over its exercises, and a student never graded and never overridden has none (an export leaves
//! them out). A cell's lateness is counted when it is read, not taken from the run: the days of a late
//! penalty the instructor gave on the assignment, else the days from the hand-in time the run recorded to
//! the student's own due date as it stands now (an extension given after the grading counts at once), the
//! course's late policy keeping its share of what the cell earned. The history of a student is every run
//! that graded them, every override and every extension and late penalty, in the order they were recorded.
use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::params;

use anatomy_course::Exercise;
use anatomy_grade::points::{format_time, score, Assignment, CourseFile, Late, OffsetDateTime};
use anatomy_intake::times::parse_time;
use anatomy_report::sheet::{points, Extension, Row};

use crate::adjust::{late_words, own_due, LatePenalty, Override};
use crate::roster::Student;
use crate::runs::{recorded, RecordedCell, CELL};
use crate::{to_the_second, Gradebook};

/// One exercise of a student, as it stands.
#[derive(Debug, Clone)]
pub struct Current {
    pub exercise: &'static Exercise,
    /// The latest run's cell.
    pub graded: Option<RecordedCell>,
    /// An override that stands over it.
    pub overridden: Option<Override>,
    /// The days late the latest run's cell counts as now ([`as_it_stands`]); none without a hand-in time
    /// or a late penalty.
    pub late_days: Option<u32>,
    /// The latest run's points as they stand now: what the cell earned, kept in part by the course's late
    /// policy for `late_days`.
    pub earned: Option<f64>,
}

impl Current {
    /// The points that count: the override's, else the latest run's as they stand now (-0 as 0); none
    /// when neither exists.
    pub fn points(&self) -> Option<f64> {
        self.overridden.as_ref().and_then(|o| o.points).or(self.earned).map(|p| p + 0.0)
        // -0 is 0
    }
}

/// A cell's days late and points as they stand now: a late penalty's days when one stands, else the days
/// from the hand-in time the run recorded to the student's own due date `due` now (the cell's own as
/// graded when there is none), the course's late policy keeping its share of what the cell earned. A cell
/// without either, or a course without a policy, keeps the points the run recorded.
fn as_it_stands(
    course: &CourseFile,
    g: &RecordedCell,
    penalty: Option<u32>,
    due: Option<OffsetDateTime>,
) -> (Option<u32>, f64) {
    let c = &g.cell;
    let due = due.or_else(|| parse_time(c.due.as_deref()?));
    let days = penalty.or_else(|| Some(Late::days(parse_time(c.handed_in.as_deref()?)?, due?)));
    match (days, course.late) {
        (Some(days), Some(policy)) => (Some(days), score(c.max_points, c.status, c.parts, Some((days, policy))).points),
        _ => (days, c.points),
    }
}

/// A student's standing in one assignment.
#[derive(Debug, Clone)]
pub struct Standing {
    pub student: Student,
    pub cells: Vec<Current>,
    pub extension: Option<Extension>,
    /// The student's own due date now: their extension's, else the assignment's.
    pub due: Option<OffsetDateTime>,
    /// A late penalty on the whole assignment, with the days late it stands for (from the student's own
    /// due date), when one stands.
    pub penalty: Option<(LatePenalty, Option<u32>)>,
}

impl Standing {
    /// The assignment's points: the sum of the cells that have any, none when no cell has.
    pub fn total(&self) -> Option<f64> {
        let counted: Vec<f64> = self.cells.iter().filter_map(Current::points).collect();
        (!counted.is_empty()).then(|| anatomy_grade::points::total(counted) + 0.0)
    }

    /// The days late that count: a late penalty's, else the most of its graded cells' as they stand now.
    pub fn late_days(&self) -> Option<u32> {
        match &self.penalty {
            Some((_, Some(days))) => Some(*days),
            _ => self.cells.iter().filter_map(|c| c.late_days).max(),
        }
    }

    /// The row the grade sheet and the class report read: the latest run's outcomes (an exercise never
    /// graded is not done), with the hand-in time the latest of those runs recorded, held to the student's
    /// own due date as it stands now (an extension given since counts, as in `show` and the exports). `due`
    /// is the page's due date: a student held to another (an extension, or another date of the course's)
    /// gets it as their own. `None` for a student never graded. (When a student's cells come from runs that
    /// saw different hand-in times, the row holds the latest's: a row has one time.)
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
                    output: None,
                },
            })
            .collect();
        let handed_in = latest.cell.handed_in.as_deref().and_then(parse_time);
        // Held to a due date other than the page's: their own now, else the one their run had.
        let own = self.due.map(format_time).or_else(|| latest.cell.due.clone());
        let extension = match own {
            Some(own) if Some(own.as_str()) != due => parse_time(&own).map(|at| Extension {
                due: at,
                reason: match &self.extension {
                    Some(e) if format_time(e.due) == own => e.reason.clone(),
                    _ if Some(&own) == latest.run_due.as_ref() => format!("the due date of run {}", latest.run),
                    _ => "the assignment's due date in the course file".into(),
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
    Graded {
        run: i64,
        at: String,
        grader: String,
        seed: i64,
        tier: String,
        assignment: String,
        cells: Vec<RecordedCell>,
    },
    Overridden {
        exercise: String,
        change: Override,
    },
    Extended {
        assignment: String,
        due: String,
        reason: String,
        by: String,
        at: String,
    },
    Late {
        assignment: String,
        penalty: LatePenalty,
    },
}

impl Event {
    fn at(&self) -> &str {
        match self {
            Event::Graded { at, .. } | Event::Extended { at, .. } => at,
            Event::Overridden { change, .. } => &change.at,
            Event::Late { penalty, .. } => &penalty.at,
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
                            c.late_days.filter(|&d| d > 0).map(|d| format!(", {}", late_words(d))).unwrap_or_default();
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
            Event::Late { assignment, penalty: p } => match p.days.is_some() || p.handed_in.is_some() {
                true => format!(
                    "{}  late penalty on {assignment}: {}, by {}: {}",
                    to_the_second(&p.at),
                    p.given(),
                    p.by,
                    p.reason
                ),
                false => format!(
                    "{}  late penalty on {assignment} withdrawn by {}: {}",
                    to_the_second(&p.at),
                    p.by,
                    p.reason
                ),
            },
        }
    }
}

impl Gradebook {
    /// Every student of the roster in one assignment, by label, each cell as it stands now: its lateness
    /// counted from the student's own due date ([`as_it_stands`]), under the override that stands.
    pub fn standings(&self, course: &CourseFile, assignment: &Assignment) -> Result<Vec<Standing>> {
        let latest = self.latest_cells(&assignment.name)?;
        let overrides = self.overrides()?;
        let extensions = self.extensions(&assignment.name)?;
        let mut penalties = self.late_penalties(&assignment.name)?;
        let standings = self
            .students()?
            .into_iter()
            .map(|student| {
                let extension = extensions.get(&student.key).cloned();
                let due = own_due(extension.as_ref(), assignment);
                let penalty = penalties.remove(&student.key).map(|p| {
                    let days = p.days_late(due);
                    (p, days)
                });
                let cells = assignment
                    .exercises
                    .iter()
                    .map(|&e| {
                        let key = (student.key, e.name.to_string());
                        let graded = latest.get(&key).cloned();
                        let now =
                            graded.as_ref().map(|g| as_it_stands(course, g, penalty.as_ref().and_then(|p| p.1), due));
                        let (late_days, earned) = (now.and_then(|n| n.0), now.map(|n| n.1));
                        Current { exercise: e, graded, overridden: overrides.get(&key).cloned(), late_days, earned }
                    })
                    .collect();
                Standing { student, cells, extension, due, penalty }
            })
            .collect();
        Ok(standings)
    }

    /// A student's history as a person reads it: who they are, then each event on a line of its own.
    pub fn history_text(&self, student: &Student) -> Result<String> {
        let mut text =
            format!("{} ({}; id {}, section {}):\n", student.label, student.name, student.lms_id, student.section);
        for event in self.history(student)? {
            text += &event.line();
            text.push('\n');
        }
        Ok(text)
    }

    /// A student's history, oldest first.
    pub fn history(&self, student: &Student) -> Result<Vec<Event>> {
        let conn = self.conn();
        let mut runs: BTreeMap<i64, Vec<RecordedCell>> = BTreeMap::new();
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
        let mut late = conn.prepare(
            "SELECT assignment, days, handed_in, reason, by, at FROM late_penalties WHERE student = ?1 ORDER BY id",
        )?;
        for l in late
            .query_map([student.key], |r| Ok(Event::Late { assignment: r.get(0)?, penalty: LatePenalty::of_row(r)? }))?
        {
            events.push(l?);
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
    pub fn show(&self, course: &CourseFile, assignment: Option<&Assignment>) -> Result<String> {
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
                for s in self.standings(course, a)? {
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
                let standings = all.iter().map(|a| self.standings(course, a)).collect::<Result<Vec<_>>>()?;
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
