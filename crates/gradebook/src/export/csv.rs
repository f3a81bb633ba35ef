//! Our own CSV: every exercise of every assignment, each assignment's total and notes (late days,
//! extensions, overrides, named mistakes), and the term's total, one row per student of the roster.
use anyhow::Result;

use anatomy_grade::points::CourseFile;
use anatomy_report::sheet::{Csv, CsvCell};

use super::{note, ExportRequest, Term, Writer};
use crate::Gradebook;

/// Our own CSV.
pub(super) struct Ours;

/// Our CSV reads no title from the course file: its columns are the assignments' and exercises' names.
pub(super) const COURSE_KEY: Option<&str> = None;

/// Our CSV's writer: it needs nothing more than the export asks.
pub(super) fn writer(_: &ExportRequest) -> Result<Box<dyn Writer>> {
    Ok(Box::new(Ours))
}

impl Writer for Ours {
    fn write(&self, _: &Gradebook, _: &CourseFile, term: &mut Term, _: &mut Vec<String>) -> Result<String> {
        Ok(write(term))
    }
}

fn write(term: &Term) -> String {
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
