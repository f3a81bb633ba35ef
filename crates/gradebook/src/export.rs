//! The current grades as the learning platforms import them, one row per student of the roster, each row
//! keyed by the ids the platform gave: Canvas's gradebook import (its own export's columns, an assignment's
//! column under the header Canvas gave it when the roster came from Canvas, and its `Points Possible`
//! row), Moodle's grade import (identify users by ID number or username; each assignment with a column of
//! feedback beside it), and our own CSV (every exercise of every assignment, late days, extensions and
//! overrides). A student never graded in an assignment gets an empty cell, which both platforms leave as
//! it is. All three are written as the grades' CSV is ([`Csv`]): every text cell (name, id, login,
//! section, note, header) in double quotes and through the rule against formulas
//! ([`spreadsheet_cell`](anatomy_report::sheet::spreadsheet_cell)), which also guards each piece after a
//! `,`, `;` or tab inside it (a name from a roster is a student's choice, and a spreadsheet in a European
//! locale splits on `;`), and every grade a bare number, as both platforms' importers read one.
use std::collections::BTreeMap;

use anyhow::{bail, Result};

use anatomy_grade::points::{format_time, Assignment, CourseFile};
use anatomy_report::sheet::{Csv, CsvCell};

use crate::history::Standing;
use crate::roster::Student;
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

/// What an export gives: the file's text, and what the instructor should know before importing it.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    pub text: String,
    pub warnings: Vec<String>,
}

/// The term as one snapshot: the assignments, and each student of the roster (by label) with their
/// standing in each assignment, in the assignments' order.
struct Term {
    assignments: Vec<Assignment>,
    students: Vec<(Student, Vec<Standing>)>,
}

impl Gradebook {
    /// The export of every assignment of the course, as text, read in one transaction: a roster imported
    /// meanwhile cannot shift one student's grades onto another's row.
    pub fn export(&self, course: &CourseFile, format: Format) -> Result<Exported> {
        let snapshot = self.conn().unchecked_transaction()?;
        self.require_roster()?;
        let term = self.term(course)?;
        let exported = match format {
            Format::Canvas => self.canvas(course, &term)?,
            Format::Moodle => Exported { text: moodle(&term), warnings: Vec::new() },
            Format::Csv => Exported { text: ours(&term), warnings: Vec::new() },
        };
        snapshot.finish()?;
        Ok(exported)
    }

    fn term(&self, course: &CourseFile) -> Result<Term> {
        let assignments = course.all_assignments();
        let mut by_student: BTreeMap<i64, Vec<Standing>> = BTreeMap::new();
        for a in &assignments {
            for standing in self.standings(a)? {
                by_student.entry(standing.student.key).or_default().push(standing);
            }
        }
        let mut students = Vec::new();
        for s in self.students()? {
            // One snapshot: every student has a standing in every assignment.
            match by_student.remove(&s.key) {
                Some(standings) if standings.len() == assignments.len() => students.push((s, standings)),
                _ => bail!("the gradebook changed while it was read: export again"),
            }
        }
        Ok(Term { assignments, students })
    }

    /// Canvas keys its import by the `ID` column, its own user id: only students imported from Canvas's
    /// export have one, so any other is left out, with a warning naming them, rather than let a grade land
    /// on someone else (and with no Canvas student at all, the export is refused).
    fn canvas(&self, course: &CourseFile, term: &Term) -> Result<Exported> {
        let not_canvas: Vec<&str> =
            term.students.iter().filter(|(s, _)| !s.from_canvas).map(|(s, _)| s.label.as_str()).collect();
        if not_canvas.len() == term.students.len() {
            bail!(
                "no student was imported from Canvas's export, so no id is Canvas's: import Canvas's gradebook export (Grades → Export) as the roster first, or export --format moodle or csv"
            );
        }
        let mut warnings = Vec::new();
        if !not_canvas.is_empty() {
            warnings.push(format!(
                "left out, since Canvas's export does not list them and their ids are not Canvas's: {}",
                not_canvas.join(", ")
            ));
        }
        let mut file = Csv::default();
        let mut header: Vec<String> =
            ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"].map(String::from).to_vec();
        for a in &term.assignments {
            let column = match self.canvas_column(&a.name)? {
                Some(column) => column,
                None => {
                    warnings.push(format!(
                        "Canvas's export had no column for {:?}: Canvas will make a new assignment of it (name the course file's assignment as Canvas does to fill the existing one)",
                        a.name
                    ));
                    a.name.clone()
                }
            };
            header.push(column);
        }
        file.record(header.into_iter().map(CsvCell::Text));
        // As Canvas's own export writes it, leading spaces and all.
        let mut possible = vec![CsvCell::Text("    Points Possible".into())];
        possible.extend(std::iter::repeat_n(CsvCell::Text(String::new()), 4));
        possible.extend(
            term.assignments
                .iter()
                .map(|a| CsvCell::Number(Some(a.exercises.iter().map(|e| course.max(e.name)).sum()))),
        );
        file.record(possible);
        for (s, standings) in term.students.iter().filter(|(s, _)| s.from_canvas) {
            let ids = [&s.name, &s.lms_id, &s.sis_id, &s.login, &s.section].map(|f| CsvCell::Text(f.to_string()));
            file.record(ids.into_iter().chain(standings.iter().map(|st| CsvCell::Number(st.total()))));
        }
        Ok(Exported { text: file.into_text(), warnings })
    }
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

/// Moodle matches a row by the column the instructor maps: `ID number` is the institution's id (Moodle's
/// own `idnumber`), left empty when the roster gave none — a platform's id there could be another user's
/// — and `Username` the login.
fn moodle(term: &Term) -> String {
    let mut file = Csv::default();
    let mut header: Vec<String> = ["ID number", "Username", "Full name"].map(String::from).to_vec();
    for a in &term.assignments {
        header.push(a.name.clone());
        header.push(format!("Feedback: {}", a.name));
    }
    file.record(header.into_iter().map(CsvCell::Text));
    for (s, standings) in &term.students {
        let mut record: Vec<CsvCell> = [&s.sis_id, &s.login, &s.name].map(|f| CsvCell::Text(f.to_string())).to_vec();
        for standing in standings {
            record.push(CsvCell::Number(standing.total()));
            record.push(CsvCell::Text(note(standing)));
        }
        file.record(record);
    }
    file.into_text()
}

fn ours(term: &Term) -> String {
    let mut file = Csv::default();
    let mut header: Vec<String> = ["student", "name", "id", "sis id", "login", "section"].map(String::from).to_vec();
    for a in &term.assignments {
        header.extend(a.exercises.iter().map(|e| format!("{}: {}", a.name, e.name)));
        header.extend([format!("{}: total", a.name), format!("{}: notes", a.name)]);
    }
    header.push("total".into());
    file.record(header.into_iter().map(CsvCell::Text));
    for (s, standings) in &term.students {
        let mut record: Vec<CsvCell> = [&s.label, &s.name, &s.lms_id, &s.sis_id, &s.login, &s.section]
            .map(|f| CsvCell::Text(f.to_string()))
            .to_vec();
        let mut total = None;
        for standing in standings {
            record.extend(standing.cells.iter().map(|c| CsvCell::Number(c.points())));
            record.push(CsvCell::Number(standing.total()));
            let mistakes: Vec<String> = standing
                .cells
                .iter()
                .filter_map(|c| Some(format!("{}: {}", c.exercise.name, c.graded.as_ref()?.cell.mistake.as_ref()?)))
                .collect();
            let notes = [note(standing), mistakes.join(", ")].into_iter().filter(|n| !n.is_empty()).collect::<Vec<_>>();
            record.push(CsvCell::Text(notes.join("; ")));
            if let Some(t) = standing.total() {
                total = Some(total.unwrap_or(0.0) + t);
            }
        }
        record.push(CsvCell::Number(total));
        file.record(record);
    }
    file.into_text()
}
