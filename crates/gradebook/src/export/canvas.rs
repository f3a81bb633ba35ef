//! Canvas's gradebook import: its own export's columns (`Student`, `ID`, `SIS User ID`, `SIS Login ID`,
//! `Section`), an assignment's column under the header Canvas gave it — matched by Canvas's id, from the
//! course file's `canvas = "TITLE (ID)"` — and its `Points Possible` row. Canvas keys its import by `ID`,
//! its own user id, so only students imported from Canvas's export have a row.
use std::collections::BTreeSet;

use anyhow::{bail, Result};

use anatomy_grade::points::{Assignment, CourseFile};
use anatomy_intake::roster::canvas_column;
use anatomy_report::sheet::{Csv, CsvCell};

use super::{guard, ExportRequest, Keyed, Term, Writer};
use crate::Gradebook;

/// Canvas's gradebook import.
pub(super) struct Canvas;

/// The key under which a course file's assignment gives its title for Canvas (`[assignments.NAME] canvas = "…"`).
const KEY: &str = "canvas";
/// That key, offered to the `formats!` list.
pub(super) const COURSE_KEY: Option<&str> = Some(KEY);

/// Canvas's writer: it needs nothing more than the export asks.
pub(super) fn writer(_: &ExportRequest) -> Result<Box<dyn Writer>> {
    Ok(Box::new(Canvas))
}

impl Writer for Canvas {
    fn write(
        &self,
        book: &Gradebook,
        course: &CourseFile,
        term: &mut Term,
        warnings: &mut Vec<String>,
    ) -> Result<String> {
        let (columns, keyed) = (book.canvas_columns()?, ids(term)?);
        let term = term.keep_graded(&keyed, warnings)?;
        Ok(write(course, term, &columns, warnings))
    }
}

/// Canvas keys its import by the `ID` column, its own user id: only students imported from Canvas's export
/// have one; any other is left out rather than let a grade land on someone else (and with no Canvas
/// student at all, the export is refused).
fn ids(term: &Term) -> Result<Keyed> {
    let keys: BTreeSet<i64> = term.students.iter().filter(|(s, _)| s.from_canvas).map(|(s, _)| s.key).collect();
    if keys.is_empty() {
        bail!(
            "no student was imported from Canvas's export, so no id is Canvas's: import Canvas's gradebook export (Grades → Export) as the roster first, or export --format moodle or csv"
        );
    }
    let why = "left out, since Canvas's export does not list them and their ids are not Canvas's";
    let shared = guard::shared(term, "Canvas ID", |s| Some(s.lms_id.clone()), guard::canvas_same);
    Ok(Keyed::by(term, |s| match keys.contains(&s.key) {
        false => Some(why.to_string()),
        true => shared.get(&s.key).cloned(),
    }))
}

/// An assignment's column in Canvas: the roster's column of the id the course file gives (`canvas =
/// "TITLE (ID)"`), else the one of its title (`canvas = "TITLE"`, else the assignment's name); a column
/// not found is written as given, and a title without an id makes Canvas create an assignment (said).
fn header(columns: &[String], a: &Assignment, warnings: &mut Vec<String>) -> String {
    let wanted = a.title(KEY).unwrap_or(&a.name);
    let (title, id) = canvas_column(wanted).map_or((wanted, None), |(t, id)| (t, Some(id)));
    let found: Vec<&String> =
        columns.iter().filter(|h| canvas_column(h).is_some_and(|(t, i)| id.map_or(t == title, |id| i == id))).collect();
    match (found.as_slice(), id) {
        ([one], _) => one.to_string(),
        ([], Some(_)) => wanted.to_string(),
        ([], None) => {
            warnings.push(format!(
                "Canvas's export had no column titled {title:?} for {}: Canvas will make a new assignment of it (give its title as Canvas's export heads it: canvas = \"TITLE (ID)\" under [assignments.{}] in the course file)",
                a.name, a.name
            ));
            title.to_string()
        }
        (many, _) => {
            warnings.push(format!(
                "Canvas's export has {} columns titled {title:?}: give the one for {} with its id (canvas = \"TITLE (ID)\")",
                many.len(),
                a.name
            ));
            title.to_string()
        }
    }
}

fn write(course: &CourseFile, term: &Term, columns: &[String], warnings: &mut Vec<String>) -> String {
    let mut file = Csv::default();
    let mut head: Vec<String> = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"].map(String::from).to_vec();
    head.extend(term.assignments.iter().map(|a| header(columns, a, warnings)));
    file.record(head.into_iter().map(CsvCell::Text));
    // As Canvas's own export writes it, leading spaces and all.
    let mut possible = vec![CsvCell::Text("    Points Possible".into())];
    possible.extend(std::iter::repeat_n(CsvCell::Text(String::new()), 4));
    possible.extend(term.assignments.iter().map(|a| CsvCell::Number(Some(course.most(a)))));
    file.record(possible);
    for (s, standings) in &term.students {
        let ids = [&s.name, &s.lms_id, &s.sis_id, &s.login, &s.section].map(|f| CsvCell::Text(f.to_string()));
        file.record(ids.into_iter().chain(standings.iter().map(|st| CsvCell::Number(st.total()))));
    }
    file.into_text()
}
