//! The current grades as the learning platforms import them, each row keyed by the ids the platform gave:
//! one module per format, each owning its columns, its importer's rules and its writer ([`Writer`]):
//! Canvas's gradebook import (`canvas.rs`), Moodle's grade import (`moodle.rs`) and our own CSV (`csv.rs`:
//! every exercise of every assignment, late days, extensions and overrides). [`Format`] names them on the
//! command line (`--format`); a new format is a module with a [`Writer`], its `writer` function and its
//! `COURSE_KEY`, and one line in the list the `formats!` macro reads.
//!
//! Both platforms read an empty cell as "no grade" and clear the grade they hold there (Moodle's import sets
//! it to none, as it does for `-`; Canvas's counts it as a change that removes the grade), so a platform's
//! file holds no empty grade: only the students with a grade in every assignment it holds, the others named
//! in a warning (export an assignment alone, `--assignment NAME`, to send each grade it has:
//! [`Term::keep_graded`]). Canvas's test student is in no file; one with grades in the gradebook (from a
//! gradebook of before it was told apart) is named in a warning.
//!
//! All are written as the grades' CSV is ([`Csv`](anatomy_report::sheet::Csv)): every text cell (name, id,
//! login, section, note, header) in double quotes and through the rule against formulas
//! ([`spreadsheet_cell`](anatomy_report::sheet::spreadsheet_cell)), which also guards each piece after a
//! `,`, `;` or tab inside it (a name from a roster is a student's choice, and a spreadsheet in a European
//! locale splits on `;`), and every grade a bare number, as both platforms' importers read one.
use std::collections::{BTreeMap, BTreeSet};

use anyhow::{bail, Result};

use anatomy_grade::points::{format_time, Assignment, CourseFile};

use crate::adjust::late_words;
use crate::history::Standing;
use crate::roster::Student;
use crate::Gradebook;

mod guard;

/// The formats, each declared once: a line makes a variant of [`Format`] (its doc comment is its help on
/// the command line) and names the module that writes it, whose `writer(&ExportRequest)` gives its
/// [`Writer`] and whose `COURSE_KEY` is the key, if any, under which a course file's assignment gives the
/// platform's title. A new format is its module's file and its line in [`formats!`]'s list below.
macro_rules! formats {
    ($($(#[doc = $help:literal])* $variant:ident => $module:ident,)*) => {
        $(mod $module;)*

        /// The files an export writes: `--format NAME` on the command line, each variant's line its help there.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
        pub enum Format {
            $($(#[doc = $help])* $variant,)*
        }

        impl Format {
            /// The format's writer, given what `request` asks of it (Moodle's refuses a file with no
            /// identifier chosen, before anything is read).
            pub fn writer(self, request: &ExportRequest) -> Result<Box<dyn Writer>> {
                match self {
                    $(Format::$variant => $module::writer(request),)*
                }
            }
        }

        /// The keys under which an assignment of the course file gives a platform's title, one per format
        /// that reads one.
        pub fn course_keys() -> Vec<&'static str> {
            [$($module::COURSE_KEY),*].into_iter().flatten().collect()
        }
    };
}

formats! {
    /// Canvas's gradebook import: one column per assignment, by the students' Canvas ids
    Canvas => canvas,
    /// Moodle's grade import: each assignment and its feedback, by the identifier --identify names
    Moodle => moodle,
    /// every exercise's points, late days, extensions and overrides, one row per student
    Csv => csv,
}

pub use moodle::MoodleId;

/// The course file at `path`, read and checked, its assignments' titles held to the keys the formats read
/// ([`course_keys`]): the one way the commands read a course file.
pub fn load_course(path: &std::path::Path) -> Result<CourseFile> {
    CourseFile::load(path, &course_keys())
}

impl Format {
    /// What the format is, in a line: its help on the command line.
    pub fn summary(self) -> String {
        help(self)
    }
}

/// A command-line value's help: its variant's doc comment.
fn help(value: impl clap::ValueEnum) -> String {
    let value = value.to_possible_value().expect("no value is hidden");
    value.get_help().map(ToString::to_string).unwrap_or_default()
}

/// One format's file: its columns, which students it can key a row by and how its platform's import reads
/// each cell. [`Gradebook::export_with`] reads the term in one snapshot, holds it to the numbers every
/// platform takes, and gives it here.
pub trait Writer {
    /// The file's text from `term` (every student of the roster, with a standing in each assignment);
    /// what the instructor should know before importing it goes to `warnings`. A platform's file keeps
    /// only the students it can key a row by ([`Keyed`]) with a grade in every cell ([`Term::keep_graded`]).
    fn write(
        &self,
        book: &Gradebook,
        course: &CourseFile,
        term: &mut Term,
        warnings: &mut Vec<String>,
    ) -> Result<String>;
}

/// What to export: the format, one assignment or every one, and for Moodle the identifier and whether the
/// site takes grades above 100 (its Unlimited grades setting).
#[derive(Debug, Clone, Copy)]
pub struct ExportRequest<'a> {
    pub format: Format,
    pub assignment: Option<&'a Assignment>,
    pub identify: Option<MoodleId>,
    pub unlimited_grades: bool,
}

/// What an export gives: the file's text, and what the instructor should know before importing it.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    pub text: String,
    pub warnings: Vec<String>,
}

/// The term as one snapshot: the assignments, and each student of the roster (by label) with their
/// standing in each assignment, in the assignments' order.
pub struct Term {
    pub assignments: Vec<Assignment>,
    pub students: Vec<(Student, Vec<Standing>)>,
}

impl Gradebook {
    /// The export of an assignment, or of every one, as text, read in one transaction: a roster imported
    /// meanwhile cannot shift one student's grades onto another's row.
    pub fn export(&self, course: &CourseFile, request: ExportRequest) -> Result<Exported> {
        let writer = request.format.writer(&request)?;
        self.export_with(course, writer.as_ref(), request.assignment)
    }

    /// The export of an assignment, or of every one, by `writer`: any format, ours or another's.
    pub fn export_with(
        &self,
        course: &CourseFile,
        writer: &dyn Writer,
        assignment: Option<&Assignment>,
    ) -> Result<Exported> {
        let snapshot = self.conn().unchecked_transaction()?;
        self.require_roster()?;
        let assignments = match assignment {
            Some(a) => vec![a.clone()],
            None => course.all_assignments(),
        };
        let mut warnings: Vec<String> = self.graded_test_students(&assignments)?.into_iter().collect();
        let mut term = self.term(course, assignments)?;
        guard::numbers(course, &term)?;
        let text = writer.write(self, course, &mut term, &mut warnings)?;
        snapshot.finish()?;
        Ok(Exported { text, warnings })
    }

    fn term(&self, course: &CourseFile, assignments: Vec<Assignment>) -> Result<Term> {
        let mut by_student: BTreeMap<i64, Vec<Standing>> = BTreeMap::new();
        for a in &assignments {
            for standing in self.standings(course, a)? {
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

    /// A warning naming Canvas's test students who have grades in `assignments` (a gradebook of before
    /// they were told apart, or one whose roster named them so since): left out of every file all the same.
    fn graded_test_students(&self, assignments: &[Assignment]) -> Result<Option<String>> {
        let tests = self.test_students()?;
        if tests.is_empty() {
            return Ok(None);
        }
        let overrides = self.overrides()?;
        let mut graded = BTreeSet::new();
        for a in assignments {
            let latest = self.latest_cells(&a.name)?;
            for t in &tests {
                let cell = |e: &&anatomy_course::Exercise| {
                    let key = (t.key, e.name.to_string());
                    latest.contains_key(&key) || overrides.contains_key(&key)
                };
                if a.exercises.iter().any(cell) {
                    graded.insert(format!("{} (id {})", t.name, t.lms_id));
                }
            }
        }
        Ok((!graded.is_empty()).then(|| {
            format!(
                "left out as Canvas's test student (its Student View, not one of the class), though the gradebook holds grades of theirs: {}",
                graded.into_iter().collect::<Vec<_>>().join("; ")
            )
        }))
    }
}

/// The students a platform's file may key a row by, and why each other is left out.
pub struct Keyed {
    keys: BTreeSet<i64>,
    why: BTreeMap<i64, String>,
}

impl Keyed {
    /// Each student of the term keyed, unless `left_out` gives why not.
    pub fn by(term: &Term, left_out: impl Fn(&Student) -> Option<String>) -> Keyed {
        let (mut keys, mut why) = (BTreeSet::new(), BTreeMap::new());
        for (s, _) in &term.students {
            match left_out(s) {
                Some(reason) => {
                    why.insert(s.key, reason);
                }
                None => {
                    keys.insert(s.key);
                }
            }
        }
        Keyed { keys, why }
    }
}

impl Term {
    /// Keeps the students with a grade in every assignment of the file (a platform reads an empty cell as
    /// "no grade" and clears the one it holds) whom the platform can key a row by. Says who is left out,
    /// and why.
    pub fn keep_graded(&mut self, keyed: &Keyed, warnings: &mut Vec<String>) -> Result<&Term> {
        let (mut unkeyed, mut none, mut some) =
            (BTreeMap::<&str, Vec<String>>::new(), Vec::new(), BTreeMap::<String, Vec<String>>::new());
        let assignments = &self.assignments;
        self.students.retain(|(s, standings)| {
            let missing: Vec<&str> = standings
                .iter()
                .zip(assignments)
                .filter(|(st, _)| st.total().is_none())
                .map(|(_, a)| a.name.as_str())
                .collect();
            match missing.len() {
                0 if keyed.keys.contains(&s.key) => return true,
                0 => unkeyed
                    .entry(keyed.why.get(&s.key).map_or("left out", String::as_str))
                    .or_default()
                    .push(s.label.clone()),
                n if n == standings.len() => none.push(s.label.clone()),
                _ => some.entry(missing.join(", ")).or_default().push(s.label.clone()),
            }
            false
        });
        let unkeyed: Vec<String> = unkeyed.iter().map(|(why, who)| format!("{why}: {}", who.join(", "))).collect();
        warnings.extend(unkeyed.iter().cloned());
        if !none.is_empty() {
            warnings.push(format!(
                "no grade to send, so left out (an empty cell would clear a grade the platform holds): {}",
                none.join(", ")
            ));
        }
        for (missing, who) in &some {
            warnings.push(format!(
                "left out, with no grade in {missing} (an empty cell would clear a grade the platform holds): {}; export each assignment alone (--assignment NAME) to send theirs",
                who.join(", ")
            ));
        }
        let names: Vec<&str> = self.assignments.iter().map(|a| a.name.as_str()).collect();
        match (self.students.is_empty(), some.is_empty()) {
            (true, _) if !unkeyed.is_empty() => bail!("no row to write: {}", unkeyed.join("; ")),
            (true, true) => bail!("nobody has a grade to send in {}: grade the class first", names.join(", ")),
            (true, false) => bail!(
                "nobody has a grade in each of {}: export each assignment alone (--assignment NAME)",
                names.join(", ")
            ),
            (false, _) => Ok(self),
        }
    }
}

/// What a student reads beside an assignment's points: lateness (a late penalty's, given by the
/// instructor, or the runs'), an extension's date, overridden cells.
pub fn note(s: &Standing) -> String {
    let mut said = Vec::new();
    match (&s.penalty, s.late_days()) {
        (Some((p, Some(days))), _) => said.push(match &p.handed_in {
            Some(at) if p.days.is_none() => format!("{} (set by the instructor: handed in {at})", late_words(*days)),
            _ => format!("{} (set by the instructor)", late_words(*days)),
        }),
        (_, Some(days)) if days > 0 => said.push(late_words(days)),
        _ => {}
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
