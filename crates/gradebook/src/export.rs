//! The current grades as the learning platforms import them, each row keyed by the ids the platform gave:
//! Canvas's gradebook import (its own export's columns, an assignment's column under the header Canvas gave
//! it — matched by Canvas's id — and its `Points Possible` row), Moodle's grade import (one identifier
//! column, chosen by the instructor, and each assignment with its feedback under the headers Moodle's import
//! maps by itself), and our own CSV (every exercise of every assignment, late days, extensions and
//! overrides).
//!
//! Both platforms read an empty cell as "no grade" and clear the grade they hold there (Moodle's import sets
//! it to none, as it does for `-`; Canvas's counts it as a change that removes the grade), so a platform's
//! file holds no empty grade: only the students with a grade in every assignment it holds, the others named
//! in a warning (export an assignment alone, `--assignment NAME`, to send each grade it has). Moodle's
//! import refuses the whole file when its first row has no identifier, and gives a later row without one to
//! the student above it, so no row goes without the chosen identifier either: a student without one is left
//! out and named. It refuses the whole file for a grade above 100 unless the site allows more (Unlimited
//! grades), so an assignment worth more is refused unless the instructor says their site allows it
//! (`--unlimited-grades`). Canvas's test student is in no file; one with grades in the gradebook (from a
//! gradebook of before it was told apart) is named in a warning.
//!
//! All three are written as the grades' CSV is ([`Csv`]): every text cell (name, id, login, section, note,
//! header) in double quotes and through the rule against formulas
//! ([`spreadsheet_cell`](anatomy_report::sheet::spreadsheet_cell)), which also guards each piece after a
//! `,`, `;` or tab inside it (a name from a roster is a student's choice, and a spreadsheet in a European
//! locale splits on `;`), and every grade a bare number, as both platforms' importers read one. What Moodle
//! matches by must reach it unchanged, so a Moodle identifier the rule would change leaves its student out
//! (named), and a Moodle header it would change is refused: the import would find no such user, and
//! refuse the whole file, or map no such item.
use std::collections::BTreeMap;

use anyhow::{bail, Result};

use anatomy_grade::points::{format_time, Assignment, CourseFile};
use anatomy_intake::roster::canvas_column;
use anatomy_report::sheet::{points, spreadsheet_cell, Csv, CsvCell};

use crate::adjust::late_words;
use crate::history::Standing;
use crate::roster::Student;
use crate::Gradebook;

mod guard;

/// The files an export writes: `--format NAME` on the command line, each variant's line its help there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Canvas's gradebook import: one column per assignment, by the students' Canvas ids
    Canvas,
    /// Moodle's grade import: each assignment and its feedback, by the identifier --identify names
    Moodle,
    /// every exercise's points, late days, extensions and overrides, one row per student
    Csv,
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

/// What to export: the format, one assignment or every one, and for Moodle the identifier and whether the
/// site takes grades above 100 (its Unlimited grades setting).
#[derive(Debug, Clone, Copy)]
pub struct Wanted<'a> {
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
struct Term {
    assignments: Vec<Assignment>,
    students: Vec<(Student, Vec<Standing>)>,
}

impl Gradebook {
    /// The export of an assignment, or of every one, as text, read in one transaction: a roster imported
    /// meanwhile cannot shift one student's grades onto another's row.
    pub fn export(&self, course: &CourseFile, wanted: Wanted) -> Result<Exported> {
        if let (Format::Moodle, None) = (wanted.format, wanted.identify) {
            bail!(
                "Moodle's import matches each row by one identifier: choose it with --identify idnumber, username or email"
            );
        }
        let snapshot = self.conn().unchecked_transaction()?;
        self.require_roster()?;
        let assignments = match wanted.assignment {
            Some(a) => vec![a.clone()],
            None => course.all_assignments(),
        };
        let mut warnings: Vec<String> = self.graded_test_students(&assignments)?.into_iter().collect();
        let mut term = self.term(course, assignments)?;
        guard::numbers(course, &term)?;
        let exported = match (wanted.format, wanted.identify) {
            (Format::Csv, _) => ours(&term),
            (Format::Canvas, _) => {
                let (columns, keyed) = (self.canvas_columns()?, self.canvas_ids(&term)?);
                canvas(course, keep_graded(&mut term, &keyed, &mut warnings)?, &columns, &mut warnings)
            }
            (Format::Moodle, Some(id)) => {
                let items = moodle_items(course, &term.assignments, wanted.unlimited_grades)?;
                let keyed = moodle_ids(&term, id);
                moodle(course, keep_graded(&mut term, &keyed, &mut warnings)?, id, &items)
            }
            (Format::Moodle, None) => unreachable!("refused above"),
        };
        snapshot.finish()?;
        Ok(Exported { text: exported, warnings })
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

    /// Canvas keys its import by the `ID` column, its own user id: only students imported from Canvas's
    /// export have one; any other is left out rather than let a grade land on someone else (and with no
    /// Canvas student at all, the export is refused).
    fn canvas_ids(&self, term: &Term) -> Result<Keyed> {
        let keys: std::collections::BTreeSet<i64> =
            term.students.iter().filter(|(s, _)| s.from_canvas).map(|(s, _)| s.key).collect();
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

    /// A warning naming Canvas's test students who have grades in `assignments` (a gradebook of before
    /// they were told apart, or one whose roster named them so since): left out of every file all the same.
    fn graded_test_students(&self, assignments: &[Assignment]) -> Result<Option<String>> {
        let tests = self.test_students()?;
        if tests.is_empty() {
            return Ok(None);
        }
        let overrides = self.overrides()?;
        let mut graded = std::collections::BTreeSet::new();
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
struct Keyed {
    keys: std::collections::BTreeSet<i64>,
    why: BTreeMap<i64, String>,
}

impl Keyed {
    /// Each student of the term keyed, unless `left_out` gives why not.
    fn by(term: &Term, left_out: impl Fn(&Student) -> Option<String>) -> Keyed {
        let (mut keys, mut why) = (std::collections::BTreeSet::new(), BTreeMap::new());
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

/// The students Moodle can find by `id`: not one without it, nor one whose value the rule against formulas
/// would change (Moodle's import would look for a user with the changed one, find none and refuse the
/// whole file), nor one whose value another student has too (Moodle would give both rows to one user).
fn moodle_ids(term: &Term, id: MoodleId) -> Keyed {
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
fn moodle_items(course: &CourseFile, assignments: &[Assignment], unlimited_grades: bool) -> Result<Vec<String>> {
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
        let item = a.moodle.as_deref().unwrap_or(&a.name);
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

/// Keeps the students with a grade in every assignment of the file (a platform reads an empty cell as "no
/// grade" and clears the one it holds) whom the platform can key a row by. Says who is left out, and why.
fn keep_graded<'t>(term: &'t mut Term, keyed: &Keyed, warnings: &mut Vec<String>) -> Result<&'t Term> {
    let (mut unkeyed, mut none, mut some) =
        (BTreeMap::<&str, Vec<String>>::new(), Vec::new(), BTreeMap::<String, Vec<String>>::new());
    term.students.retain(|(s, standings)| {
        let missing: Vec<&str> = standings
            .iter()
            .zip(&term.assignments)
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
    let names: Vec<&str> = term.assignments.iter().map(|a| a.name.as_str()).collect();
    match (term.students.is_empty(), some.is_empty()) {
        (true, _) if !unkeyed.is_empty() => bail!("no row to write: {}", unkeyed.join("; ")),
        (true, true) => bail!("nobody has a grade to send in {}: grade the class first", names.join(", ")),
        (true, false) => bail!(
            "nobody has a grade in each of {}: export each assignment alone (--assignment NAME)",
            names.join(", ")
        ),
        (false, _) => Ok(term),
    }
}

/// An assignment's column in Canvas: the roster's column of the id the course file gives (`canvas =
/// "TITLE (ID)"`), else the one of its title (`canvas = "TITLE"`, else the assignment's name); a column
/// not found is written as given, and a title without an id makes Canvas create an assignment (said).
fn canvas_header(columns: &[String], a: &Assignment, warnings: &mut Vec<String>) -> String {
    let wanted = a.canvas.as_deref().unwrap_or(&a.name);
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

fn canvas(course: &CourseFile, term: &Term, columns: &[String], warnings: &mut Vec<String>) -> String {
    let mut file = Csv::default();
    let mut header: Vec<String> =
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"].map(String::from).to_vec();
    header.extend(term.assignments.iter().map(|a| canvas_header(columns, a, warnings)));
    file.record(header.into_iter().map(CsvCell::Text));
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

/// What a student reads beside an assignment's points: lateness (a late penalty's, given by the
/// instructor, or the runs'), an extension's date, overridden cells.
fn note(s: &Standing) -> String {
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

/// Moodle matches a row by the one column the instructor maps, headed here by that field's own name in
/// Moodle's import, so that the import chooses it; each assignment's grade and feedback are headed `ITEM
/// (Real)` and `ITEM (Feedback)`, which Moodle's import maps by itself to the grade item named ITEM as it
/// lists them (`items`, from [`moodle_items`]). The feedback is never empty (an empty one would replace
/// what Moodle holds): the points, then the notes.
fn moodle(course: &CourseFile, term: &Term, id: MoodleId, items: &[String]) -> String {
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
