//! `anatomy exercises grade` as a whole: the flags' choices in ([`GradeOptions`]), the class graded (into
//! the gradebook when a grading names its assignment or students, its roster matched first), the CSV,
//! feedback and class report written, and what the command prints out ([`Printout`]). The command line
//! parses the flags, draws the progress bar and prints.
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use time::OffsetDateTime;

use anatomy_grade::points::{self, Assignment};
use anatomy_grade::sandbox::{self, Limits, SandboxChoice, Tier};
use anatomy_gradebook::location::Location;
use anatomy_gradebook::matching::Matched;
use anatomy_gradebook::Gradebook;

use crate::{check_output_folder, chosen, Class, GradedClass};

/// What a grading of a class is asked to do, as `anatomy exercises grade`'s flags say it.
pub struct GradeOptions {
    /// The class: one folder per student, or a course's nbgrader `submitted/`.
    pub submissions: PathBuf,
    /// Only these exercises (none: all, or the assignment's).
    pub only: Vec<String>,
    /// Where to write the grades as CSV.
    pub csv: Option<PathBuf>,
    /// Where to write one feedback file per student.
    pub feedback: Option<PathBuf>,
    /// One JSON line per student instead of the table.
    pub json: bool,
    /// The course file (none: exercises/course.toml); the gradebook is found from it.
    pub course: Option<PathBuf>,
    /// Wall-time limit of one check and of one compiler run.
    pub time_per_check: Duration,
    pub compile_time: Duration,
    /// Which sandbox, and whether to run without one (code the instructor trusts).
    pub sandbox: SandboxChoice,
    pub no_sandbox: bool,
    /// Where to write the class report, with the similarity pairs when `similarity`.
    pub report: Option<PathBuf>,
    pub similarity: bool,
    /// The due date, for the course's late policy.
    pub due: Option<OffsetDateTime>,
    /// The assignment to record the grading under in the gradebook.
    pub assignment: Option<String>,
    /// Regrade only these students of the gradebook (login, platform id or label).
    pub students: Vec<String>,
}

/// What grading a class prints once it is graded, in this order: the class report's closing line
/// (standard error), the table or the JSON lines (standard output), the grading's closing line and where
/// it was recorded (standard error); then [`Printout::finish`] says whether the grader itself failed.
pub struct Printout {
    pub report_line: Option<String>,
    pub rows: String,
    pub closing_line: String,
    pub recorded: Option<String>,
    graded: GradedClass,
}

impl Printout {
    /// The grader's own failure, if it had one (see [`GradedClass::finish`]): what ends the command in failure
    /// once the graded rows are printed.
    pub fn finish(self) -> Result<()> {
        self.graded.finish()
    }
}

/// Where a grading is recorded: the gradebook, the assignment, the hand-ins as matched to its roster and
/// the students to regrade (none: everyone).
struct Record {
    book: Gradebook,
    assignment: Assignment,
    matched: Matched,
    students: Vec<String>,
}

/// Grades the class `options` choose, with their limits and sandbox (and records it, when they name an
/// assignment or students), and writes the outputs they ask for. `say` is given each line to tell before
/// grading (a grading not recorded, the roster's matching); `progress(graded, of)` is told after each
/// student. A failure of the grader itself is kept in the printout, after the rows it graded.
pub fn grade(
    options: GradeOptions,
    say: &mut dyn FnMut(&str),
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Printout> {
    let at = Location::of(options.course.as_deref());
    let course = anatomy_gradebook::export::load_course(&options.course.clone().unwrap_or_else(points::default_file))?;
    // A grading is recorded when it names its assignment (or students to regrade): in a gradebook
    // that is there, or nowhere, said in the error.
    let (chosen, due, record) = match &options.assignment {
        None if options.students.is_empty() => (chosen(&options.only)?, options.due, None),
        name => {
            at.require()?;
            let set = course.assignment(name.as_deref())?;
            let (chosen, due) = set.narrowed(&options.only, options.due)?;
            (chosen, due, Some(set))
        }
    };
    let tier = if options.no_sandbox { Tier::None } else { sandbox::choose(options.sandbox)? };
    if let (None, true) = (&record, at.exists()) {
        say(&format!("not recorded in {}: give --assignment NAME to record a grading", at.line()));
    }
    let limits =
        Limits { time_per_check: options.time_per_check, compile_time: options.compile_time, ..Limits::default() };
    let class = Class { chosen, course, tier, limits, due };
    let started = Instant::now();
    check_output_folder("--csv", options.csv.as_deref())?;
    check_output_folder("--report", options.report.as_deref())?;
    let record = match record {
        None => None,
        Some(assignment) => {
            let book = at.open()?;
            let matched = book.match_hand_ins(&options.submissions, Some(&assignment))?;
            say(&matched.lines().join("\n"));
            Some(Record { book, assignment, matched, students: options.students.clone() })
        }
    };
    let (graded, recorded) = match record {
        None => (class.grade(&options.submissions, progress)?, None),
        Some(Record { mut book, assignment, matched, students }) => {
            let r = class.grade_into(&mut book, &assignment.name, &matched, &students, progress)?;
            let a = &assignment.name;
            let line = r.run.map(|n| format!("recorded as run {n} of {a} in {}", book.path().display()));
            (r.graded, line)
        }
    };
    written(&class, &options, graded, recorded, started)
}

/// Writes what the options ask for of a graded class, and says what the command prints.
fn written(
    class: &Class,
    options: &GradeOptions,
    graded: GradedClass,
    recorded: Option<String>,
    started: Instant,
) -> Result<Printout> {
    let rows = &graded.rows;
    class.write(rows, options.csv.as_deref(), options.feedback.as_deref())?;
    let sheet = class.sheet();
    let report_line = match options.report.as_deref() {
        Some(dir) => {
            let similar_in = options.similarity.then_some(options.submissions.as_path());
            Some(class.report(dir, rows, similar_in)?.closing_line(dir))
        }
        None => None,
    };
    let printed = match options.json {
        true => rows.iter().map(|row| format!("{}\n", sheet.json(row))).collect(),
        false => sheet.table(rows),
    };
    let closing_line = sheet.closing_line(rows, started.elapsed().as_secs_f64());
    Ok(Printout { report_line, rows: printed, closing_line, recorded, graded })
}

/// The class report made again from a grading's JSON lines (`anatomy exercises report`), with the course
/// file it was graded under (none: exercises/course.toml) and the similarity pairs of the class folder
/// `similarity` when given; returns the report's closing line.
pub fn remake_report(grades: &Path, out: &Path, course: Option<&Path>, similarity: Option<&Path>) -> Result<String> {
    let course = anatomy_gradebook::export::load_course(&course.map_or_else(points::default_file, Path::to_path_buf))?;
    let summary = anatomy_report::report::remake(grades, out, &course, similarity)?;
    Ok(summary.closing_line(out))
}
