//! Canvas's and Moodle's grade imports, as their code reads a CSV file, to read our exports back with: a
//! file is right when, imported by these rules into a course that already holds grades, every grade lands
//! on its student and no grade is cleared. Shared by the gradebook's tests and the command's (`#[path]`).
//!
//! Canvas (canvas-lms, `app/models/gradebook_importer.rb` and `ui/features/gradebook_uploads/jquery/`):
//! - the header's first cell holds `Student` and its second `ID`; `SIS User ID` then `SIS Login ID` (or
//!   `SIS Login ID` alone) after them, and the last of the student columns holds `Section`, else the file
//!   is refused ("Invalid header row");
//! - the totals (`Current Score`, `Final Grade`, … and their `Unposted` forms) are not assignments; every
//!   other column is one, matched by the id of `TITLE (ID)`, else by its whole header as a title, else
//!   made a new assignment;
//! - a row whose first cell holds `Points Possible` gives the points; a row of nothing but `Muted` or
//!   `Manual Posting…` cells, or of nothing, is skipped; a line of only `,`, `;` and spaces is skipped;
//! - a row's student is the one with the `ID`, else the `SIS User ID`, else the `SIS Login ID`, else the
//!   name (as written or last name first), else an unknown student the import asks about;
//! - a grade is the cell, trimmed; no change when it equals the score held or both are blank or `-`; any
//!   other cell is posted — a blank one over a score removes it (the review page marks it a removal).
//!
//! Moodle (moodle, `grade/import/csv/classes/load_data.php`, `grade/import/grade_import_form.php`):
//! - "Map from" / "Map to": the first of the fields User ID, Username, ID number, Email address (in that
//!   order) whose name a header is, is the identifier the form chooses by itself;
//! - a header `ITEM (Real)` is mapped by itself to the grade item listed as ITEM, `ITEM (Feedback)` to its
//!   feedback; any other column is ignored unless the instructor maps it;
//! - a line of at most one field is skipped; the identifier is trimmed, and one PHP's `empty` calls empty
//!   (`""`, `"0"`) keeps the previous row's user — on the first row there is none, and the whole import is
//!   refused; an identifier no user has refuses the whole import;
//! - a grade cell that is empty or `-` sets no grade (clearing the one held), any other must be a number;
//!   a feedback cell replaces the feedback held, empty or not;
//! - a grade above 100 refuses the whole import (`insert_grade_record`: `$gradepointmaximum = 100` unless
//!   the site's Unlimited grades, `$CFG->unlimitedgrades`, is on, when it is the site's Grade point
//!   maximum, `$CFG->gradepointmax`; a larger one calls `cleanup_import('gradevaluetoobig')`).
#![allow(dead_code)]
use std::collections::BTreeMap;

/// A CSV's records, each field as written (quotes undone), `None` for an empty one (Ruby's CSV reads an
/// empty field as `nil`, or `""` when quoted: both are blank to either importer).
fn records(text: &str) -> Vec<Vec<Option<String>>> {
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    reader
        .records()
        .map(|r| r.unwrap().iter().map(|f| Some(f.to_string()).filter(|f| !f.is_empty())).collect())
        .collect()
}

/// A Canvas user of the course.
#[derive(Debug, Clone)]
pub struct CanvasUser {
    pub id: u64,
    pub name: String,
    pub sortable_name: String,
    pub sis_user_id: String,
    pub login: String,
}

/// A Canvas course as the importer finds it: its students, assignments (id, title) and scores.
#[derive(Debug, Clone, Default)]
pub struct CanvasCourse {
    pub users: Vec<CanvasUser>,
    pub assignments: Vec<(u64, String)>,
    pub scores: BTreeMap<(u64, u64), String>,
}

/// What Canvas's import does with a file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CanvasImported {
    /// The scores after the import, by (user id, assignment id).
    pub scores: BTreeMap<(u64, u64), String>,
    /// The `Points Possible` row, by assignment id.
    pub points_possible: BTreeMap<u64, String>,
    /// Columns it would make new assignments of, and rows of students it does not know.
    pub new_assignments: Vec<String>,
    pub unknown_students: Vec<String>,
    /// The scores it removes (a blank cell over a score).
    pub removed: Vec<(u64, u64)>,
}

const CANVAS_TOTALS: [&str; 9] = [
    "Current Score",
    "Current Points",
    "Current Grade",
    "Final Score",
    "Final Points",
    "Final Grade",
    "Override Score",
    "Override Grade",
    "Override Status",
];

/// `Assignment.title_and_id`: `TITLE (ID)` → (TITLE, ID).
fn title_and_id(header: &str) -> (String, Option<u64>) {
    if let Some((title, rest)) = header.rsplit_once('(') {
        let title = title.strip_suffix(|c: char| c.is_whitespace());
        if let (Some(title), Some(id)) = (title, rest.strip_suffix(')')) {
            if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
                return (title.to_string(), id.parse().ok());
            }
        }
    }
    (header.to_string(), None)
}

/// Canvas's import of `text` into `course`, or why it refuses the file.
pub fn canvas_import(course: &CanvasCourse, text: &str) -> Result<CanvasImported, String> {
    let skip = |line: &str| !line.is_empty() && line.chars().all(|c| matches!(c, ';' | ',' | ' '));
    let text: String = text.split_inclusive('\n').filter(|l| !skip(l.trim_end_matches(['\r', '\n']))).collect();
    let rows = records(&text);
    let cell = |row: &[Option<String>], i: usize| row.get(i).cloned().flatten();
    let header: Vec<String> = rows.first().ok_or("empty")?.iter().map(|c| c.clone().unwrap_or_default()).collect();
    if !(header.len() > 3 && header[0].contains("Student") && header[1].contains("ID")) {
        return Err("Invalid header row".into());
    }
    let (mut student_columns, mut sis_user, mut sis_login) = (3, None, None);
    if header[2].contains("SIS Login ID") {
        (student_columns, sis_login) = (4, Some(2));
    } else if header[2].contains("SIS User ID") && header[3].contains("SIS Login ID") {
        (student_columns, sis_user, sis_login) = (5, Some(2), Some(3));
    }
    if !header[student_columns - 1].contains("Section") {
        return Err("Invalid header row".into());
    }
    let mut imported = CanvasImported { scores: course.scores.clone(), ..Default::default() };
    // Each assignment column: its index and the assignment's id (a new one gets none).
    let mut columns: Vec<(usize, Option<u64>)> = Vec::new();
    for (i, h) in header.iter().enumerate().skip(student_columns) {
        if CANVAS_TOTALS.iter().any(|t| h.contains(t)) {
            continue;
        }
        let (title, id) = title_and_id(h);
        let found = id
            .filter(|id| course.assignments.iter().any(|(a, _)| a == id))
            .or_else(|| course.assignments.iter().find(|(_, t)| t == h).map(|(a, _)| *a));
        if found.is_none() {
            imported.new_assignments.push(title);
        }
        columns.push((i, found));
    }
    for row in &rows[1..] {
        if cell(row, 0).is_some_and(|c| c.contains("Points Possible")) {
            for &(i, id) in &columns {
                if let (Some(id), Some(p)) = (id, cell(row, i)) {
                    imported.points_possible.insert(id, p);
                }
            }
            continue;
        }
        let muted = |c: &String| {
            let t = c.trim().to_lowercase();
            t.is_empty() || t == "muted" || t.starts_with("manual posting")
        };
        if row.iter().flatten().all(muted) {
            continue;
        }
        let by_id =
            cell(row, 1).and_then(|id| id.parse::<u64>().ok()).and_then(|id| course.users.iter().find(|u| u.id == id));
        let by = |col: Option<usize>, field: fn(&CanvasUser) -> &str| {
            let value = col.and_then(|c| cell(row, c)).filter(|v| !v.is_empty())?;
            course.users.iter().find(|u| field(u) == value)
        };
        let name = cell(row, 0).unwrap_or_default();
        let user = by_id
            .or_else(|| by(sis_user, |u| &u.sis_user_id))
            .or_else(|| by(sis_login, |u| &u.login))
            .or_else(|| course.users.iter().find(|u| u.name == name || u.sortable_name == name));
        let Some(user) = user else {
            imported.unknown_students.push(name);
            continue;
        };
        for &(i, id) in &columns {
            let Some(id) = id else { continue };
            let new = cell(row, i).map(|g| g.trim().to_string()).unwrap_or_default();
            let held = course.scores.get(&(user.id, id)).cloned().unwrap_or_default();
            let blank = |g: &str| g.is_empty() || g == "-";
            if new == held || (blank(&new) && blank(&held)) {
                continue;
            }
            match blank(&new) {
                true => {
                    imported.scores.remove(&(user.id, id));
                    imported.removed.push((user.id, id));
                }
                false => {
                    imported.scores.insert((user.id, id), new);
                }
            }
        }
    }
    Ok(imported)
}

/// A Moodle user.
#[derive(Debug, Clone)]
pub struct MoodleUser {
    pub id: u64,
    pub username: String,
    pub idnumber: String,
    pub email: String,
}

/// A Moodle course as the import finds it: its users, grade items (id, name as the import lists it), the
/// grades and feedback held, and its site's Unlimited grades setting (`None`: off, as Moodle installs
/// itself, so that no grade may be above 100; `Some(max)`: on, with the site's Grade point maximum).
#[derive(Debug, Clone, Default)]
pub struct MoodleCourse {
    pub users: Vec<MoodleUser>,
    pub items: Vec<(u64, String)>,
    pub grades: BTreeMap<(u64, u64), Option<f64>>,
    pub feedback: BTreeMap<(u64, u64), String>,
    pub unlimited_grades: Option<f64>,
}

/// What Moodle's import does with a file: the field it identified users by, and the grades and feedback
/// after it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MoodleImported {
    pub identified_by: String,
    pub grades: BTreeMap<(u64, u64), Option<f64>>,
    pub feedback: BTreeMap<(u64, u64), String>,
}

/// Moodle's import of `text` into `course` with the mappings its form chooses by itself, or why it refuses
/// the whole file.
pub fn moodle_import(course: &MoodleCourse, text: &str) -> Result<MoodleImported, String> {
    let rows = records(text);
    let header: Vec<String> =
        rows.first().ok_or("empty")?.iter().map(|c| c.clone().unwrap_or_default().trim().to_string()).collect();
    type Field = (&'static str, fn(&MoodleUser) -> String);
    let fields: [Field; 4] = [
        ("User ID", |u| u.id.to_string()),
        ("Username", |u| u.username.clone()),
        ("ID number", |u| u.idnumber.clone()),
        ("Email address", |u| u.email.clone()),
    ];
    let (from, (field_name, field)) = fields
        .iter()
        .find_map(|f| header.iter().position(|h| h == f.0).map(|i| (i, f)))
        .ok_or("no column is mapped to a user field")?;
    // Each column mapped by itself: a grade item's grade or feedback.
    let item = |suffix: &str, h: &str| -> Option<u64> {
        let (name, _) = h.split_once(&format!("({suffix})"))?;
        course.items.iter().find(|(_, n)| n.trim() == name.trim()).map(|(id, _)| *id)
    };
    let mut imported = MoodleImported {
        identified_by: field_name.to_string(),
        grades: course.grades.clone(),
        feedback: course.feedback.clone(),
    };
    let mut student: Option<u64> = None;
    for row in &rows[1..] {
        if row.len() <= 1 {
            continue;
        }
        let value = |i: usize| row.get(i).cloned().flatten().unwrap_or_default().trim().to_string();
        let id = value(from);
        if !(id.is_empty() || id == "0") {
            student =
                Some(course.users.iter().find(|u| field(u) == id).ok_or(format!("no user with {field_name} {id}"))?.id);
        }
        let Some(user) = student else { return Err("the first row identifies no user: the import is refused".into()) };
        for (i, h) in header.iter().enumerate() {
            if let Some(item) = item("Real", h) {
                let v = value(i);
                let grade = match v.as_str() {
                    "" | "-" => None,
                    n => Some(n.parse::<f64>().map_err(|_| format!("bad grade {n:?}"))?),
                };
                let most = course.unlimited_grades.unwrap_or(100.0);
                if grade.is_some_and(|g| g > most) {
                    return Err(format!("gradevaluetoobig: a grade is above {most}: the import is refused"));
                }
                imported.grades.insert((user, item), grade);
            } else if let Some(item) = item("Feedback", h) {
                imported.feedback.insert((user, item), value(i));
            }
        }
    }
    Ok(imported)
}
