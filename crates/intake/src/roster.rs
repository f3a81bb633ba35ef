//! A class list as a learning platform exports it, and the names it gives the files students hand in.
//!
//! Both come from outside the grader: the roster is the LMS's file, but a student chose the name in it, and
//! a student chose the end of every file name in a bulk download. So both are read with bounds — at most
//! [`MAX_ROSTER`] bytes, [`MAX_STUDENTS`] rows and [`MAX_FIELD`] characters a field — by the `csv` crate,
//! which loops over its input and recurses into nothing. A name keeps every character, with the invisible
//! ones written out as labels write them ([`crate::names::label`]), so that no terminal or page is steered
//! by one.
//!
//! Two rosters are read: Canvas's gradebook export (`Student, ID, SIS User ID, SIS Login ID, Section`, then
//! one column per assignment headed `TITLE (ID)`, a `Points Possible` row and, for assignments posted by
//! hand, a `Manual Posting` row) and a plain CSV with the columns `name`, `id`, `login`, `section`, `sis_id`
//! and `email` (any order; all but `name` and `id` may be left out). Canvas's export lists its test student
//! too ([`canvas_test_student`]), which the gradebook keeps apart from the class.
use std::ffi::OsStr;

/// The largest roster read: a class of [`MAX_STUDENTS`] with long names and many assignment columns.
pub const MAX_ROSTER: u64 = 16 << 20;
/// The most students a roster may hold.
pub const MAX_STUDENTS: usize = 20_000;
/// The most characters in one name, id, login or section.
pub const MAX_FIELD: usize = 256;

/// One student as the LMS knows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LmsStudent {
    /// As the LMS writes it (Canvas: "Last, First").
    pub name: String,
    /// The LMS's own id (Canvas: `ID`, the number in its download names); never empty.
    pub id: String,
    /// The institution's id (Canvas: `SIS User ID`), if any.
    pub sis_id: String,
    /// The login (Canvas: `SIS Login ID`), if any.
    pub login: String,
    pub section: String,
    /// The e-mail address (a plain roster's `email`; Canvas's export has none), if any.
    pub email: String,
}

impl LmsStudent {
    /// Whether this is Canvas's test student ([`canvas_test_student`]), read from a roster of `origin`.
    pub fn is_canvas_test_student(&self, origin: Origin) -> bool {
        origin == Origin::Canvas && canvas_test_student(&self.name, &self.sis_id, &self.login)
    }
}

/// The names Canvas gives the test student its Student View makes in every course ("Test Student", which
/// its gradebook export writes last name first).
pub const CANVAS_TEST_STUDENT: [&str; 2] = ["Student, Test", "Test Student"];

/// Whether a student of Canvas's export is Canvas's test student: named so, with no SIS id, and a login
/// that is empty or the one Canvas makes for it (`find_or_create_student_view_student`: an HMAC-SHA1 in
/// hex, 40 lowercase hex digits, which its export writes as the `SIS Login ID`). It is enrolled in the
/// course (in every section), so the export lists it, last, but it is nobody: an instructor's own hand-in
/// in Student View. A student who chose the name but has an SIS id or a login of their own is a student.
pub fn canvas_test_student(name: &str, sis_id: &str, login: &str) -> bool {
    let hex = |s: &str| s.len() == 40 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    CANVAS_TEST_STUDENT.contains(&name) && sis_id.is_empty() && (login.is_empty() || hex(login))
}

/// A Canvas gradebook column's header, `TITLE (ID)`, as its title and Canvas's id for the assignment (the
/// id is what Canvas's importer matches a column by); `None` for a header without an id (its totals).
pub fn canvas_column(header: &str) -> Option<(&str, &str)> {
    let (title, rest) = header.rsplit_once(" (")?;
    let id = rest.strip_suffix(')')?;
    let digits = !id.is_empty() && id.len() <= 20 && id.bytes().all(|b| b.is_ascii_digit());
    (digits && !title.trim().is_empty()).then_some((title, id))
}

/// Which export a roster came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Canvas,
    Plain,
}

/// A roster read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roster {
    pub origin: Origin,
    pub students: Vec<LmsStudent>,
    /// A Canvas export's assignment columns, as Canvas heads them (`Attention (1234)`): an export back to
    /// Canvas uses the same header, so that its grades land in the same assignment.
    pub assignment_columns: Vec<String>,
}

/// Reads a roster; the error is one line that says where and what to fix.
pub fn read(bytes: &[u8]) -> Result<Roster, String> {
    if bytes.len() as u64 > MAX_ROSTER {
        return Err(format!("the roster is over {} MiB: export the class alone", MAX_ROSTER >> 20));
    }
    let text =
        std::str::from_utf8(bytes).map_err(|_| "the roster is not UTF-8 text: export it as UTF-8 CSV".to_string())?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Some(line) = unclosed_quote(text) {
        return Err(format!(
            "roster line {line}: a field there opens a quote (\") that the line does not close, so it would take \
             the lines after it into that one field: close the quote on line {line}, or remove it"
        ));
    }
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    let mut records = reader.records();
    let header = match records.next() {
        Some(Ok(h)) => h,
        Some(Err(e)) => return Err(format!("the roster's first line is not CSV: {e}")),
        None => return Err("the roster is empty: export the class list as CSV".into()),
    };
    let header: Vec<String> = header.iter().map(|h| h.trim().to_string()).collect();
    let layout = Layout::of(&header)?;
    let mut students = Vec::new();
    // The line each record starts on, counted on from the record before (the reader's own count starts
    // before the blank lines it skips).
    let (mut counted_to, mut line) = (0, 1);
    for (n, record) in records.enumerate() {
        let record = record.map_err(|e| format!("roster line {}: not CSV ({e})", n + 2))?;
        let start = record.position().map_or(counted_to, |p| p.byte() as usize).max(counted_to);
        let start = start + text.as_bytes()[start..].iter().take_while(|b| matches!(b, b'\r' | b'\n')).count();
        line += text.as_bytes()[counted_to..start].iter().filter(|&&b| b == b'\n').count();
        counted_to = start;
        let field = |i: Option<usize>| -> Result<String, String> {
            let value = i.and_then(|i| record.get(i)).unwrap_or("").trim();
            if value.chars().count() > MAX_FIELD {
                return Err(format!("roster line {line}: a field is over {MAX_FIELD} characters"));
            }
            Ok(crate::names::label(OsStr::new(value)))
        };
        let name = field(Some(layout.name))?;
        // Canvas's second line gives each assignment's points; an older export adds a line for muted or
        // manually posted assignments, with no student id.
        if layout.origin == Origin::Canvas && (name == "Points Possible" || field(Some(layout.id))?.is_empty()) {
            continue;
        }
        if record.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        let student = LmsStudent {
            name,
            id: field(Some(layout.id))?,
            sis_id: field(layout.sis_id)?,
            login: field(layout.login)?,
            section: field(layout.section)?,
            email: field(layout.email)?,
        };
        if student.id.is_empty() {
            return Err(format!("roster line {line}: the id is empty: every student needs the LMS's id"));
        }
        students.push(student);
        if students.len() > MAX_STUDENTS {
            return Err(format!("the roster holds over {MAX_STUDENTS} students: export one class at a time"));
        }
    }
    if students.is_empty() {
        return Err("the roster lists no student: export the class with its students".into());
    }
    let keys: [fn(&LmsStudent) -> String; 4] =
        [|s| s.id.clone(), |s| s.sis_id.clone(), |s| s.login.clone(), |s| s.email.clone()];
    for key in keys {
        let mut seen = std::collections::BTreeSet::new();
        if let Some(twice) = students.iter().map(key).filter(|k| !k.is_empty()).find(|k| !seen.insert(k.clone())) {
            return Err(format!(
                "the roster names {twice:?} twice: each id, institution id, login and e-mail must be one student's"
            ));
        }
    }
    Ok(Roster { origin: layout.origin, students, assignment_columns: layout.assignments })
}

/// The line where a quoted field opens and runs past its line's end, read as the CSV reader reads quotes:
/// a quote opens a field only at its start, `""` inside is one quote, and the field ends at its closing
/// quote. No field of a roster holds a line break, so such a field is a quote left open, which would take
/// every line after it into one field (a class of one, the others silently gone), or a login or id
/// holding a line break.
pub fn unclosed_quote(text: &str) -> Option<usize> {
    #[derive(Clone, Copy, PartialEq)]
    enum At {
        FieldStart,
        Field,
        Quoted(usize),
        QuoteInQuoted(usize),
    }
    let (mut at, mut line) = (At::FieldStart, 1);
    for b in text.bytes() {
        at = match (at, b) {
            (At::Quoted(opened), b'\n' | b'\r') => return Some(opened),
            (At::Quoted(opened), b'"') => At::QuoteInQuoted(opened),
            (At::QuoteInQuoted(opened), b'"') => At::Quoted(opened),
            (At::Quoted(_), _) => at,
            (At::FieldStart, b'"') => At::Quoted(line),
            (_, b',' | b'\r') => At::FieldStart,
            (_, b'\n') => {
                line += 1;
                At::FieldStart
            }
            _ => At::Field,
        };
    }
    match at {
        At::Quoted(opened) => Some(opened),
        _ => None,
    }
}

/// Reads the roster file `path` (at most [`MAX_ROSTER`] bytes, a regular file); the error is one line
/// that names the file, where in it and what to fix.
pub fn read_file(path: &std::path::Path) -> Result<Roster, String> {
    const LIMIT: crate::files::Limit =
        crate::files::Limit { max: MAX_ROSTER, kind: "a roster", fix: "export the class list alone, as CSV" };
    read(&crate::files::read(path, LIMIT)?).map_err(|why| format!("{}: {why}", path.display()))
}

/// Where each field is, read from the header.
struct Layout {
    origin: Origin,
    name: usize,
    id: usize,
    sis_id: Option<usize>,
    login: Option<usize>,
    section: Option<usize>,
    email: Option<usize>,
    assignments: Vec<String>,
}

impl Layout {
    fn of(header: &[String]) -> Result<Layout, String> {
        let at = |name: &str| header.iter().position(|h| h.eq_ignore_ascii_case(name));
        if header.first().map(String::as_str) == Some("Student") && at("ID").is_some() {
            // Canvas: the fixed columns, then its assignments, each headed "NAME (ID)"; the totals it adds
            // ("Current Score", …) have no id.
            let assignments = header.iter().filter(|h| canvas_column(h).is_some()).take(1000).cloned().collect();
            return Ok(Layout {
                origin: Origin::Canvas,
                name: 0,
                id: at("ID").expect("found"),
                sis_id: at("SIS User ID"),
                login: at("SIS Login ID"),
                section: at("Section"),
                email: None,
                assignments,
            });
        }
        match (at("name"), at("id")) {
            (Some(name), Some(id)) => Ok(Layout {
                origin: Origin::Plain,
                name,
                id,
                sis_id: at("sis_id"),
                login: at("login"),
                section: at("section"),
                email: at("email"),
                assignments: Vec::new(),
            }),
            _ => Err("the roster's first line is neither Canvas's gradebook header (Student, ID, …) nor a plain \
                      one with the columns name and id (login, section, sis_id and email optional)"
                .into()),
        }
    }
}

/// A file of a Canvas bulk download ("Download Submissions"), by its name:
/// `lastfirst[_LATE]_USERID_SUBMISSIONID_FILE`, where Canvas writes everything before `FILE` and the
/// student chose `FILE` (Canvas adds `-1`, `-2`, … before the extension of a file handed in again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    /// The student's Canvas id: the roster's `ID`.
    pub user_id: String,
    /// Canvas marked the hand-in late.
    pub late: bool,
    /// The student's own file name, without Canvas's resubmission number.
    pub file: String,
    /// Canvas's number for a file handed in again (`layer_norm-2.rs`: 2), 0 for the first.
    pub resubmission: u32,
}

/// Reads a Canvas download's file name, or `None` when it is not one. The ids are the first two fields
/// of digits after the name, so that nothing in the student's part can stand for another student's id.
pub fn canvas_download(name: &str) -> Option<Download> {
    if name.len() > 1024 {
        return None;
    }
    let fields: Vec<&str> = name.split('_').collect();
    let digits = |f: &str| !f.is_empty() && f.len() <= 20 && f.bytes().all(|b| b.is_ascii_digit());
    let i = (1..fields.len().saturating_sub(2)).find(|&i| digits(fields[i]) && digits(fields[i + 1]))?;
    // The name Canvas writes is letters (and hyphens) only; anything else before the ids is not its layout.
    let named = &fields[..i];
    if named.iter().any(|f| f.is_empty() || f.chars().any(|c| !c.is_alphabetic() && c != '-')) {
        return None;
    }
    let late = named[1..].iter().any(|f| f.eq_ignore_ascii_case("late"));
    let file = fields[i + 2..].join("_");
    if file.is_empty() {
        return None;
    }
    let (file, resubmission) = without_resubmission_number(&file);
    Some(Download { user_id: fields[i].to_string(), late, file, resubmission })
}

/// `layer_norm-1.rs` → (`layer_norm.rs`, 1): Canvas's number for a file handed in again. A name that is
/// all extension (`.rs`) or none keeps its dots; the name is never empty.
fn without_resubmission_number(file: &str) -> (String, u32) {
    let (stem, extension) = match file.rsplit_once('.') {
        Some((stem, x)) if !stem.is_empty() => (stem, Some(x)),
        _ => (file, None),
    };
    let (stem, number) = match stem.rsplit_once('-') {
        Some((before, n))
            if !before.is_empty() && !n.is_empty() && n.len() <= 4 && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            (before, n.parse().expect("at most four digits"))
        }
        _ => (stem, 0),
    };
    let name = match extension {
        Some(x) => format!("{stem}.{x}"),
        None => stem.to_string(),
    };
    (name, number)
}

#[cfg(test)]
mod tests;
