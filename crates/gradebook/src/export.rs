//! The current grades as the learning platforms import them, one row per student of the roster, each row
//! keyed by the ids the platform gave: Canvas's gradebook import (its own export's columns, an assignment's
//! column under the header Canvas gave it when the roster came from Canvas, and its `Points Possible`
//! row), Moodle's grade import (identify users by ID number or username; each assignment with a column of
//! feedback beside it), and our own CSV (every exercise of every assignment, late days, extensions and
//! overrides). A student never graded in an assignment gets an empty cell, which both platforms leave as
//! it is. Every text cell goes through the rule against formulas ([`spreadsheet_cell`]): a name from a
//! roster is a student's choice.
use anyhow::Result;

use anatomy_grade::points::{format_time, Assignment, CourseFile};
use anatomy_report::sheet::{points, spreadsheet_cell};

use crate::history::Standing;
use crate::Gradebook;

/// The files an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Canvas,
    Moodle,
    Csv,
}

impl Format {
    pub const ALL: [Format; 3] = [Format::Canvas, Format::Moodle, Format::Csv];

    pub fn name(self) -> &'static str {
        match self {
            Format::Canvas => "canvas",
            Format::Moodle => "moodle",
            Format::Csv => "csv",
        }
    }

    pub fn summary(self) -> &'static str {
        match self {
            Format::Canvas => "Canvas's gradebook import: one column per assignment, by the students' Canvas ids",
            Format::Moodle => {
                "Moodle's grade import: one column per assignment and its feedback, by ID number or username"
            }
            Format::Csv => "every exercise's points, late days, extensions and overrides, one row per student",
        }
    }
}

/// One assignment's standings, with the assignment.
type Term = Vec<(Assignment, Vec<Standing>)>;

impl Gradebook {
    /// The export of every assignment of the course, as text.
    pub fn export(&self, course: &CourseFile, format: Format) -> Result<String> {
        self.require_roster()?;
        let term: Term = course
            .all_assignments()
            .into_iter()
            .map(|a| Ok((a.clone(), self.standings(&a)?)))
            .collect::<Result<_>>()?;
        match format {
            Format::Canvas => self.canvas(course, &term),
            Format::Moodle => moodle(&term),
            Format::Csv => ours(&term),
        }
    }

    fn canvas(&self, course: &CourseFile, term: &Term) -> Result<String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header: Vec<String> =
            ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"].map(String::from).to_vec();
        for (a, _) in term {
            header.push(spreadsheet_cell(&self.canvas_column(&a.name)?.unwrap_or_else(|| a.name.clone())).into_owned());
        }
        w.write_record(&header)?;
        // As Canvas's own export writes it, leading spaces and all.
        let mut possible =
            vec!["    Points Possible".to_string(), String::new(), String::new(), String::new(), String::new()];
        possible.extend(term.iter().map(|(a, _)| points(a.exercises.iter().map(|e| course.max(e.name)).sum())));
        w.write_record(&possible)?;
        for i in 0..students(term) {
            let s = &term[0].1[i].student;
            let mut record: Vec<String> = [&s.name, &s.lms_id, &s.sis_id, &s.login, &s.section]
                .iter()
                .map(|f| spreadsheet_cell(f).into_owned())
                .collect();
            record.extend(term.iter().map(|(_, standings)| standings[i].total().map(points).unwrap_or_default()));
            w.write_record(&record)?;
        }
        Ok(String::from_utf8(w.into_inner()?)?)
    }
}

/// How many students the term's standings hold (each assignment's are the same roster, in label order).
fn students(term: &Term) -> usize {
    term.first().map_or(0, |(_, s)| s.len())
}

/// What a student reads beside an assignment's points: lateness, an extension's date, overridden cells.
fn note(s: &Standing) -> String {
    let mut said = Vec::new();
    if let Some(days) = s.late_days().filter(|&d| d > 0) {
        said.push(format!("{days} days late"));
    }
    if let Some(e) = &s.extension {
        said.push(format!("due date extended to {}", format_time(e.due)));
    }
    let overridden: Vec<&str> = s.cells.iter().filter(|c| c.overridden.is_some()).map(|c| c.exercise.name).collect();
    if !overridden.is_empty() {
        said.push(format!("points set by the instructor: {}", overridden.join(", ")));
    }
    said.join("; ")
}

fn moodle(term: &Term) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = ["ID number", "Username", "Full name"].map(String::from).to_vec();
    for (a, _) in term {
        header.push(a.name.clone());
        header.push(format!("Feedback: {}", a.name));
    }
    w.write_record(&header)?;
    for i in 0..students(term) {
        let s = &term[0].1[i].student;
        let id = if s.sis_id.is_empty() { &s.lms_id } else { &s.sis_id };
        let mut record: Vec<String> =
            [id, &s.login, &s.name].iter().map(|f| spreadsheet_cell(f).into_owned()).collect();
        for (_, standings) in term {
            record.push(standings[i].total().map(points).unwrap_or_default());
            record.push(spreadsheet_cell(&note(&standings[i])).into_owned());
        }
        w.write_record(&record)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

fn ours(term: &Term) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = ["student", "name", "id", "sis id", "login", "section"].map(String::from).to_vec();
    for (a, _) in term {
        header.extend(a.exercises.iter().map(|e| format!("{}: {}", a.name, e.name)));
        header.extend([format!("{}: total", a.name), format!("{}: notes", a.name)]);
    }
    header.push("total".into());
    w.write_record(&header)?;
    for i in 0..students(term) {
        let s = &term[0].1[i].student;
        let mut record: Vec<String> = [&s.label, &s.name, &s.lms_id, &s.sis_id, &s.login, &s.section]
            .iter()
            .map(|f| spreadsheet_cell(f).into_owned())
            .collect();
        let mut total = None;
        for (_, standings) in term {
            let standing = &standings[i];
            record.extend(standing.cells.iter().map(|c| c.points().map(points).unwrap_or_default()));
            record.push(standing.total().map(points).unwrap_or_default());
            let mistakes: Vec<String> = standing
                .cells
                .iter()
                .filter_map(|c| Some(format!("{}: {}", c.exercise.name, c.graded.as_ref()?.cell.mistake.as_ref()?)))
                .collect();
            let notes = [note(standing), mistakes.join(", ")].into_iter().filter(|n| !n.is_empty()).collect::<Vec<_>>();
            record.push(spreadsheet_cell(&notes.join("; ")).into_owned());
            if let Some(t) = standing.total() {
                total = Some(total.unwrap_or(0.0) + t);
            }
        }
        record.push(total.map(points).unwrap_or_default());
        w.write_record(&record)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
