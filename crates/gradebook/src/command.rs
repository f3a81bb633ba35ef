//! The commands that change the gradebook or write from it, whole (`anatomy exercises gradebook extend`,
//! `override`, `late`, `export`, `history`): what the instructor gives, as the flags say it, in; the lines the command
//! prints out. The command line parses the flags and prints.
use std::path::PathBuf;

use anyhow::{Context, Result};
use time::OffsetDateTime;

use anatomy_course::write_whole;
use anatomy_grade::points::CourseFile;

use crate::adjust::who;
use crate::export::{ExportRequest, Format, MoodleId};
use crate::location::Location;
use crate::Gradebook;

/// A student's own due date for an assignment (`extend`): a date, or days after the assignment's.
pub struct ExtendOptions {
    pub student: String,
    pub assignment: Option<String>,
    pub due: Option<OffsetDateTime>,
    pub days: Option<u32>,
    pub reason: String,
    /// Who grants it (none: the user's login).
    pub by: Option<String>,
}

/// One cell's points set by hand, or withdrawn (`override`).
pub struct OverrideOptions {
    pub student: String,
    pub exercise: String,
    pub points: Option<f64>,
    pub clear: bool,
    pub comment: String,
    pub by: Option<String>,
}

/// Late penalties on a whole assignment (`late`): `STUDENT=DAYS` or `STUDENT=TIME` each, or the students
/// whose penalty is withdrawn (`clear`).
pub struct LateOptions {
    pub students: Vec<String>,
    pub assignment: Option<String>,
    pub clear: bool,
    pub reason: String,
    pub by: Option<String>,
}

/// The grades as a learning platform imports them, written to `out` (`export`).
pub struct ExportOptions {
    pub format: Format,
    pub out: PathBuf,
    pub assignment: Option<String>,
    pub identify: Option<MoodleId>,
    pub unlimited_grades: bool,
}

/// What an export says: what the instructor should know before importing it (each a warning), then the
/// file written.
pub struct ExportWritten {
    pub warnings: Vec<String>,
    pub line: String,
}

impl Location {
    /// Gives a student their own due date (`extend`); returns the line that says it.
    pub fn extend(&self, course: &CourseFile, given: ExtendOptions) -> Result<String> {
        let mut book = self.open()?;
        let (student, assignment) = (book.student(&given.student)?, course.assignment(given.assignment.as_deref())?);
        let due = book.extend(&student, &assignment, given.due, given.days, &given.reason, &who(given.by))?;
        Ok(Gradebook::extended_line(&student, &assignment, due))
    }

    /// Sets one cell's points by hand, or withdraws them (`override`); returns the line that says it.
    pub fn set_override(&self, course: &CourseFile, given: OverrideOptions) -> Result<String> {
        let mut book = self.open()?;
        let (student, e) = (book.student(&given.student)?, anatomy_course::find(&given.exercise)?);
        let points = if given.clear { None } else { given.points };
        book.set_override(&student, e.name, points, course.max(e.name), &given.comment, &who(given.by))?;
        Ok(Gradebook::override_line(&student, e.name, points))
    }

    /// Gives or withdraws late penalties on a whole assignment (`late`); returns a line per student.
    pub fn set_late(&self, course: &CourseFile, given: LateOptions) -> Result<Vec<String>> {
        let mut book = self.open()?;
        let entries = book.late_entries(&given.students, given.clear)?;
        let assignment = course.assignment(given.assignment.as_deref())?;
        book.set_late(course, &assignment, &entries, &given.reason, &who(given.by))
    }

    /// How a student's grades came to be (`history`), as the command prints it.
    pub fn history(&self, student: &str) -> Result<String> {
        let book = self.read()?;
        book.history_text(&book.student(student)?)
    }

    /// Writes the grades as a platform imports them (`export`), whole.
    pub fn export_to(&self, course: &CourseFile, given: ExportOptions) -> Result<ExportWritten> {
        let assignment = given.assignment.map(|a| course.assignment(Some(&a))).transpose()?;
        let request = ExportRequest {
            format: given.format,
            assignment: assignment.as_ref(),
            identify: given.identify,
            unlimited_grades: given.unlimited_grades,
        };
        let exported = self.read()?.export(course, request)?;
        let out = &given.out;
        write_whole(out, &exported.text).with_context(|| format!("cannot write {}", out.display()))?;
        let line = format!("wrote {} ({})", out.display(), given.format.summary());
        Ok(ExportWritten { warnings: exported.warnings, line })
    }
}
