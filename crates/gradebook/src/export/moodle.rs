//! Moodle's grade import: one identifier column, chosen by the instructor (`--identify`), and each
//! assignment with its feedback under the headers Moodle's import maps by itself, to the grade item the
//! course file names (`moodle = "…"`, else the assignment's name).
//!
//! Moodle's import refuses the whole file when its first row has no identifier, and gives a later row
//! without one to the student above it, so no row goes without the chosen identifier: a student without
//! one is left out and named. It refuses the whole file for a grade above 100 unless the site allows more
//! (Unlimited grades), so an assignment worth more is refused unless the instructor says their site allows
//! it (`--unlimited-grades`). What Moodle matches by must reach it unchanged, so a Moodle identifier the rule
//! against formulas would change leaves its student out (named), and a Moodle header it would change is
//! refused: the import would find no such user, and refuse the whole file, or map no such item.
use anyhow::{bail, Result};

use anatomy_grade::points::{Assignment, CourseFile};
use anatomy_report::sheet::{points, spreadsheet_cell, Csv, CsvCell};

use super::{guard, note, ExportRequest, Keyed, Term, Writer};
use crate::roster::Student;
use crate::Gradebook;

/// Moodle's grade import, by the identifier the instructor chose.
pub(super) struct Moodle {
    id: MoodleId,
    unlimited_grades: bool,
}

/// The key under which a course file's assignment gives its title for Moodle (`[assignments.NAME] moodle = "…"`).
const KEY: &str = "moodle";
/// That key, offered to the `formats!` list.
pub(super) const COURSE_KEY: Option<&str> = Some(KEY);

/// The writer `request` asks for; refused without an identifier.
pub(super) fn writer(request: &ExportRequest) -> Result<Box<dyn Writer>> {
    let Some(id) = request.identify else {
        bail!("Moodle's import matches each row by one identifier: choose it with --identify idnumber, username or email");
    };
    Ok(Box::new(Moodle { id, unlimited_grades: request.unlimited_grades }))
}

impl Writer for Moodle {
    fn write(&self, _: &Gradebook, course: &CourseFile, term: &mut Term, warnings: &mut Vec<String>) -> Result<String> {
        let items = items(course, &term.assignments, self.unlimited_grades)?;
        let keyed = ids(term, self.id);
        let term = term.keep_graded(&keyed, warnings)?;
        Ok(write(course, term, self.id, &items))
    }
}

/// The user field a Moodle file identifies its rows by, one per file, as Moodle's import maps it ("Map
/// from" that column, "Map to" this field): its header is the field's own name in Moodle's import, so that
/// the import chooses it by itself. `--identify NAME` on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MoodleId {
    /// Moodle's ID number: the institution's id (Canvas's SIS User ID, a roster's sis_id)
    #[value(name = "idnumber")]
    IdNumber,
    /// Moodle's username: the login (Canvas's SIS Login ID, a roster's login)
    Username,
    /// Moodle's email address: a plain roster's email
    Email,
}

impl MoodleId {
    /// The column's header: the field's name in Moodle's import ("Map to").
    pub fn header(self) -> &'static str {
        match self {
            MoodleId::IdNumber => "ID number",
            MoodleId::Username => "Username",
            MoodleId::Email => "Email address",
        }
    }

    /// The student's value of this field; none when empty or `0`, which Moodle's import reads as no
    /// identifier (PHP's `empty`).
    fn of(self, s: &Student) -> Option<&str> {
        let value = match self {
            MoodleId::IdNumber => &s.sis_id,
            MoodleId::Username => &s.login,
            MoodleId::Email => &s.email,
        };
        Some(value.trim()).filter(|v| !v.is_empty() && *v != "0")
    }
}

/// The students Moodle can find by `id`: not one without it, nor one whose value the rule against formulas
/// would change (Moodle's import would look for a user with the changed one, find none and refuse the
/// whole file), nor one whose value another student has too (Moodle would give both rows to one user).
fn ids(term: &Term, id: MoodleId) -> Keyed {
    let shared = guard::shared(term, id.header(), |s| id.of(s).map(String::from), guard::moodle_same);
    let none = format!(
        "left out, with no {} (Moodle's import refuses a file whose first row has none, and gives a later row without one to the student above it)",
        id.header()
    );
    let changed = format!(
        "left out, since their {} starts a piece with =, +, - or @, which the rule against formulas writes with a ' before it (Moodle's import would find no user with that, and refuse the whole file)",
        id.header()
    );
    Keyed::by(term, |s| match id.of(s) {
        None => Some(none.clone()),
        Some(value) if spreadsheet_cell(value) != value => Some(changed.clone()),
        Some(_) => shared.get(&s.key).cloned(),
    })
}

/// Each assignment's grade item as Moodle's import lists it (`moodle = "…"`, else its name), checked:
/// Moodle refuses the whole file for a grade above 100 unless the site allows more, and maps a column by
/// its header only when it reaches Moodle as written (the rule against formulas would change one with a
/// piece starting with `=`, `+`, `-` or `@`). Each is refused in one line that names the fix.
fn items(course: &CourseFile, assignments: &[Assignment], unlimited_grades: bool) -> Result<Vec<String>> {
    let over: Vec<String> = assignments
        .iter()
        .filter(|a| course.most(a) > 100.0)
        .map(|a| format!("{} (worth {})", a.name, points(course.most(a))))
        .collect();
    if !(unlimited_grades || over.is_empty()) {
        bail!(
            "Moodle's grade import refuses the whole file when a grade is above 100, and {} can earn more: give --unlimited-grades if your site allows it (Site administration > Grades > General settings > Unlimited grades), or declare assignments worth at most 100 each in the course file",
            over.join(", ")
        );
    }
    let mut items = Vec::new();
    for a in assignments {
        let item = a.title(KEY).unwrap_or(&a.name);
        // ` (Real)` and ` (Feedback)` start no piece: the item's own pieces decide.
        let header = format!("{item} (Real)");
        if spreadsheet_cell(&header) != header {
            bail!(
                "the Moodle grade item {item:?} of {} has a piece starting with =, +, - or @ (at its start, or after a comma, a semicolon or a tab), which the rule against formulas writes with a ' before it, so Moodle's import would map no column to it: give the assignment a name without such a piece (moodle = \"…\" under [assignments.{}] in the course file)",
                a.name,
                a.name
            );
        }
        items.push(item.to_string());
    }
    Ok(items)
}

/// Moodle matches a row by the one column the instructor maps, headed here by that field's own name in
/// Moodle's import, so that the import chooses it; each assignment's grade and feedback are headed `ITEM
/// (Real)` and `ITEM (Feedback)`, which Moodle's import maps by itself to the grade item named ITEM as it
/// lists them (`items`, from [`items`]). The feedback is never empty (an empty one would replace
/// what Moodle holds): the points, then the notes.
fn write(course: &CourseFile, term: &Term, id: MoodleId, items: &[String]) -> String {
    let mut file = Csv::default();
    let mut header: Vec<String> = vec![id.header().into(), "Full name".into()];
    for item in items {
        header.push(format!("{item} (Real)"));
        header.push(format!("{item} (Feedback)"));
    }
    file.record(header.into_iter().map(CsvCell::Text));
    for (s, standings) in &term.students {
        let mut record = vec![CsvCell::Text(id.of(s).unwrap_or_default().into()), CsvCell::Text(s.name.clone())];
        for (standing, a) in standings.iter().zip(&term.assignments) {
            let total = standing.total();
            record.push(CsvCell::Number(total));
            let said = format!("{} of {} points", points(total.unwrap_or_default()), points(course.most(a)));
            let note = note(standing);
            record.push(CsvCell::Text(if note.is_empty() { said } else { format!("{said}; {note}") }));
        }
        file.record(record);
    }
    file.into_text()
}
