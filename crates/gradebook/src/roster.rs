//! The class list, imported from the learning platform's own export (read, with bounds, by
//! [`anatomy_intake::roster`]). A student is their platform id: importing again updates names, logins and
//! sections and adds newcomers, and never makes one student two. Each student gets a label, the name every
//! output uses for them: their login, else their platform id. Canvas's test student is kept too, so that
//! its hand-ins are known for what they are, but it is no student of the class: no count, no export and no
//! command lists it ([`Student::is_test`]).
use anyhow::{bail, Context, Result};
use rusqlite::{params, OptionalExtension};

use anatomy_intake::roster::{Origin, Roster};

/// The `roster` column of a student imported from Canvas's export.
const CANVAS: &str = "canvas";

use crate::Gradebook;

/// One student of the roster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Student {
    /// The gradebook's own key.
    pub key: i64,
    pub name: String,
    pub lms_id: String,
    pub sis_id: String,
    pub login: String,
    pub section: String,
    pub label: String,
    /// Imported from Canvas's export, so that `lms_id` is Canvas's id.
    pub from_canvas: bool,
    /// The e-mail address, or ''.
    pub email: String,
    /// Canvas's test student, as decided when its roster was imported
    /// ([`anatomy_intake::roster::canvas_test_student`]): kept apart from the class.
    pub test: bool,
}

/// What an import changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    pub added: usize,
    pub updated: usize,
    pub unchanged: usize,
    /// Students of the gradebook the new roster no longer lists (kept: their runs stay theirs).
    pub not_listed: Vec<String>,
    /// Canvas's test students the roster listed (kept apart, in no count): name and id of each.
    pub test_students: Vec<String>,
}

impl Imported {
    pub fn line(&self, book: &Gradebook) -> String {
        let mut line = format!(
            "roster imported into {}: {} added, {} updated, {} unchanged",
            book.path().display(),
            self.added,
            self.updated,
            self.unchanged
        );
        if !self.not_listed.is_empty() {
            line += &format!("; kept, though the roster no longer lists them: {}", self.not_listed.join(", "));
        }
        if !self.test_students.is_empty() {
            line += &format!(
                "; Canvas's test student ({}) is not one of the class: left out of the counts, the matching and the exports",
                self.test_students.join("; ")
            );
        }
        line
    }
}

impl crate::location::Location {
    /// Imports a roster into the gradebook here, creating it when there is none; what a person reads of it
    /// (and, for a new gradebook, where it is and why).
    pub fn import(&self, roster: &Roster) -> Result<String> {
        let new = !self.exists();
        let mut book = self.create()?;
        let line = book.import_roster(roster)?.line(&book);
        Ok(match new {
            true => format!("a new gradebook: {}\n{line}", self.line()),
            false => line,
        })
    }
}

const COLUMNS: &str = "id, name, lms_id, sis_id, login, section, label, roster, email, test_student";

fn student(r: &rusqlite::Row) -> rusqlite::Result<Student> {
    Ok(Student {
        key: r.get(0)?,
        name: r.get(1)?,
        lms_id: r.get(2)?,
        sis_id: r.get(3)?,
        login: r.get(4)?,
        section: r.get(5)?,
        label: r.get(6)?,
        from_canvas: r.get::<_, String>(7)? == CANVAS,
        email: r.get(8)?,
        test: r.get(9)?,
    })
}

impl Gradebook {
    /// Imports a roster in one transaction: by platform id, new students are added and known ones updated.
    /// A Canvas export also gives each assignment's column header, which its export back reuses.
    pub fn import_roster(&mut self, roster: &Roster) -> Result<Imported> {
        let kind = match roster.origin {
            Origin::Canvas => CANVAS,
            Origin::Plain => "csv",
        };
        self.change(|tx| {
            let mut imported =
                Imported { added: 0, updated: 0, unchanged: 0, not_listed: Vec::new(), test_students: Vec::new() };
            let mut listed = std::collections::BTreeSet::new();
            for s in &roster.students {
                listed.insert(s.id.clone());
                let test = s.is_canvas_test_student(roster.origin);
                let change = upsert(tx, s, kind, test)?;
                if test {
                    imported.test_students.push(format!("{}, id {}", s.name, s.id));
                    continue;
                }
                match change {
                    Change::Added => imported.added += 1,
                    Change::Updated => imported.updated += 1,
                    Change::Unchanged => imported.unchanged += 1,
                }
            }
            let mut all = tx.prepare(&format!("SELECT {COLUMNS} FROM students ORDER BY label"))?;
            let known: Vec<Student> = all.query_map([], student)?.collect::<Result<_, _>>()?;
            imported.not_listed =
                known.into_iter().filter(|s| !s.is_test() && !listed.contains(&s.lms_id)).map(|s| s.label).collect();
            remember_columns(tx, &roster.assignment_columns)?;
            Ok(imported)
        })
    }

    /// Every student of the class, by label (Canvas's test student is none).
    pub fn students(&self) -> Result<Vec<Student>> {
        Ok(self.everyone()?.into_iter().filter(|s| !s.is_test()).collect())
    }

    /// Canvas's test students the roster listed, kept apart from the class.
    pub fn test_students(&self) -> Result<Vec<Student>> {
        Ok(self.everyone()?.into_iter().filter(Student::is_test).collect())
    }

    /// Every row of the roster, test students included.
    fn everyone(&self) -> Result<Vec<Student>> {
        let mut query = self.conn().prepare(&format!("SELECT {COLUMNS} FROM students ORDER BY label"))?;
        let students = query.query_map([], student)?.collect::<Result<Vec<_>, _>>()?;
        Ok(students)
    }

    /// The student someone means by `who`: their label, login, platform id or institution id — or, when
    /// more than one student holds that text in one of those fields, the field named first: `login:NAME`,
    /// `id:ID`, `sis:ID` or `label:LABEL`. Text that means two students is refused, never guessed.
    pub fn student(&self, who: &str) -> Result<Student> {
        let found = find_students(&self.students()?, who);
        match found.as_slice() {
            [one] => Ok(one.clone()),
            [] => bail!(
                "no student {who:?} in the roster: give a login, a platform id or a label (cargo anatomy exercises gradebook show lists them)"
            ),
            many => bail!(
                "{who:?} names {} students ({}): say which field you mean, e.g. login:{who}, id:{who}, sis:{who} or label:{who}",
                many.len(),
                many.iter().map(|s| s.label.as_str()).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    /// The headers of Canvas's assignment columns (`TITLE (ID)`) its exports gave, the latest of each id.
    pub fn canvas_columns(&self) -> Result<Vec<String>> {
        let mut query = self.conn().prepare("SELECT canvas FROM platform_columns ORDER BY canvas")?;
        let columns = query.query_map([], |r| r.get(0))?.collect::<Result<Vec<String>, _>>()?;
        Ok(columns)
    }

    /// Fails when the roster is empty: a gradebook grades students it knows.
    pub fn require_roster(&self) -> Result<()> {
        if self.students()?.is_empty() {
            bail!(
                "the gradebook {} has no roster: import one first (cargo anatomy exercises gradebook roster FILE)",
                self.path().display()
            );
        }
        Ok(())
    }
}

/// Reads a roster file (the platform's export, at most [`anatomy_intake::roster::MAX_ROSTER`] bytes); the
/// error is one line naming the file.
pub fn read_roster(path: &std::path::Path) -> Result<Roster> {
    use std::io::Read;
    let shown = path.display();
    // A regular file only: opening a pipe with no writer would wait for ever.
    if !std::fs::metadata(path).with_context(|| format!("cannot read the roster {shown}"))?.is_file() {
        bail!("{shown} is not a file: give the platform's exported CSV");
    }
    let file = std::fs::File::open(path).with_context(|| format!("cannot read the roster {shown}"))?;
    let mut bytes = Vec::new();
    file.take(anatomy_intake::roster::MAX_ROSTER + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read the roster {shown}"))?;
    anatomy_intake::roster::read(&bytes).map_err(|why| anyhow::anyhow!("{shown}: {why}"))
}

/// Keeps each Canvas column's header by Canvas's id for the assignment, so that a title changed in Canvas
/// replaces the one before it (a gradebook of an older version kept them by title: those of the same id go).
fn remember_columns(tx: &rusqlite::Transaction, headers: &[String]) -> Result<()> {
    use anatomy_intake::roster::canvas_column;
    let mut kept = tx.prepare("SELECT assignment, canvas FROM platform_columns")?;
    let kept: Vec<(String, String)> = kept.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
    for header in headers {
        let Some((_, id)) = canvas_column(header) else { continue };
        for (key, _) in kept.iter().filter(|(_, h)| canvas_column(h).is_some_and(|(_, i)| i == id)) {
            tx.execute("DELETE FROM platform_columns WHERE assignment = ?1", [key])?;
        }
        tx.execute(
            "INSERT INTO platform_columns (assignment, canvas) VALUES (?1, ?2)
             ON CONFLICT (assignment) DO UPDATE SET canvas = excluded.canvas",
            params![id, header],
        )?;
    }
    Ok(())
}

/// What an import did to one student.
enum Change {
    Added,
    Updated,
    Unchanged,
}

/// Adds a student of the roster, or updates the one with their platform id; `test` says whether it is
/// Canvas's test student, as decided when the roster is read.
fn upsert(
    tx: &rusqlite::Transaction,
    s: &anatomy_intake::roster::LmsStudent,
    kind: &str,
    test: bool,
) -> Result<Change> {
    let known: Option<(i64, bool)> = tx
        .query_row(
            "SELECT id, (name, sis_id, login, section, roster, email, test_student) = (?2, ?3, ?4, ?5, ?6, ?7, ?8)
             FROM students WHERE lms_id = ?1",
            params![s.id, s.name, s.sis_id, s.login, s.section, kind, s.email, test],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let label = free_label(tx, s, known.map(|k| k.0))?;
    match known {
        None => {
            tx.execute(
                "INSERT INTO students (name, lms_id, sis_id, login, section, label, roster, email, test_student)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![s.name, s.id, s.sis_id, s.login, s.section, label, kind, s.email, test],
            )?;
            Ok(Change::Added)
        }
        Some((_, true)) => Ok(Change::Unchanged),
        Some((key, false)) => {
            tx.execute(
                "UPDATE students SET name = ?1, sis_id = ?2, login = ?3, section = ?4, label = ?5, roster = ?6, email = ?7,
                 test_student = ?8 WHERE id = ?9",
                params![s.name, s.sis_id, s.login, s.section, label, kind, s.email, test, key],
            )?;
            Ok(Change::Updated)
        }
    }
}

/// A label no other student holds: the login, else the platform id; when that is taken, the login with
/// the platform id beside it.
fn free_label(tx: &rusqlite::Transaction, s: &anatomy_intake::roster::LmsStudent, own: Option<i64>) -> Result<String> {
    let first = if s.login.is_empty() { s.id.clone() } else { s.login.clone() };
    for label in [first.clone(), format!("{first} ({})", s.id)] {
        let holder: Option<i64> =
            tx.query_row("SELECT id FROM students WHERE label = ?1", [&label], |r| r.get(0)).optional()?;
        if holder.is_none() || holder == own {
            return Ok(label);
        }
    }
    bail!("two students of the roster would both be called {first:?}: give each a login of their own")
}

/// What to call a student so that `who` finds them alone: their label, or `label:LABEL` when the label is
/// also another student's login or id.
pub fn unambiguous(students: &[Student], student: &Student) -> String {
    match find_students(students, &student.label).len() {
        1 => student.label.clone(),
        _ => format!("label:{}", student.label),
    }
}

/// The students whose label, login, platform id or institution id is `who` (one field only, with a
/// `login:`, `id:`, `sis:` or `label:` prefix). An empty field never matches.
pub fn find_students(students: &[Student], who: &str) -> Vec<Student> {
    let (only, text) = match who.split_once(':') {
        Some((field, text)) if FIELDS.contains(&field) => (Some(field), text),
        _ => (None, who),
    };
    students.iter().filter(|s| s.holds_in(text, only)).cloned().collect()
}

/// The fields a student is found by, with the prefix that names each.
const FIELDS: [&str; 4] = ["label", "login", "id", "sis"];

impl Student {
    /// Whether this is Canvas's test student, as its roster's import decided ([`Student::test`]).
    pub fn is_test(&self) -> bool {
        self.test
    }

    /// The student's label, login, platform id and institution id, each with its prefix ([`FIELDS`]).
    fn fields(&self) -> [(&'static str, &str); 4] {
        [(FIELDS[0], &self.label), (FIELDS[1], &self.login), (FIELDS[2], &self.lms_id), (FIELDS[3], &self.sis_id)]
    }

    /// Whether `text` is this student's label, login, platform id or institution id, read as it is (a
    /// folder's name: no prefix picks a field). An empty field holds nothing.
    pub fn holds(&self, text: &str) -> bool {
        self.holds_in(text, None)
    }

    /// Whether `text` is in one of this student's fields, or in the field named `only` ([`FIELDS`]).
    fn holds_in(&self, text: &str, only: Option<&str>) -> bool {
        self.fields().iter().any(|&(f, v)| !v.is_empty() && v == text && only.is_none_or(|o| o == f))
    }
}
