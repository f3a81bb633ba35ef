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
pub struct Student {
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

impl Student {
    /// Whether this is Canvas's test student ([`canvas_test_student`]), read from a roster of `format`.
    pub fn is_canvas_test_student(&self, format: Format) -> bool {
        format == Format::Canvas && canvas_test_student(&self.name, &self.sis_id, &self.login)
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
pub enum Format {
    Canvas,
    Plain,
}

/// A roster read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roster {
    pub format: Format,
    pub students: Vec<Student>,
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
    for (n, record) in records.enumerate() {
        let line = n + 2;
        let record = record.map_err(|e| format!("roster line {line}: not CSV ({e})"))?;
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
        if layout.format == Format::Canvas && (name == "Points Possible" || field(Some(layout.id))?.is_empty()) {
            continue;
        }
        if record.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        let student = Student {
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
    let keys: [fn(&Student) -> String; 4] =
        [|s| s.id.clone(), |s| s.sis_id.clone(), |s| s.login.clone(), |s| s.email.clone()];
    for key in keys {
        let mut seen = std::collections::BTreeSet::new();
        if let Some(twice) = students.iter().map(key).filter(|k| !k.is_empty()).find(|k| !seen.insert(k.clone())) {
            return Err(format!(
                "the roster names {twice:?} twice: each id, institution id, login and e-mail must be one student's"
            ));
        }
    }
    Ok(Roster { format: layout.format, students, assignment_columns: layout.assignments })
}

/// Where each field is, read from the header.
struct Layout {
    format: Format,
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
                format: Format::Canvas,
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
                format: Format::Plain,
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
mod tests {
    use super::*;

    const CANVAS: &str = "Student,ID,SIS User ID,SIS Login ID,Section,Attention (1234),Decoder (1235),Current Score\n\
        \"    Points Possible\",,,,,15,40,\n\
        \"Lovelace, Ada\",101,S-1,ada,Mon,,,\n\
        \"=HYPERLINK(\"\"x\"\"), Eve\",102,S-2,eve,Tue,3,,\n";

    #[test]
    fn canvas_s_export_gives_its_students_and_assignment_columns_and_skips_points_possible() {
        let roster = read(CANVAS.as_bytes()).unwrap();
        assert_eq!(roster.format, Format::Canvas);
        assert_eq!(roster.assignment_columns, ["Attention (1234)", "Decoder (1235)"]);
        let ids: Vec<(&str, &str, &str, &str)> = roster
            .students
            .iter()
            .map(|s| (s.name.as_str(), s.id.as_str(), s.login.as_str(), s.section.as_str()))
            .collect();
        assert_eq!(ids, [("Lovelace, Ada", "101", "ada", "Mon"), ("=HYPERLINK(\"x\"), Eve", "102", "eve", "Tue")]);
        // A BOM, as Excel writes one, changes nothing.
        assert_eq!(read(format!("\u{feff}{CANVAS}").as_bytes()).unwrap(), roster);
    }

    #[test]
    fn a_plain_roster_in_any_column_order_and_every_refusal_in_one_line() {
        let roster = read(b"login,NAME,id\nada,Ada Lovelace,7\nbob,Bob,8\n").unwrap();
        assert_eq!(
            (roster.format, roster.students[1].login.as_str(), roster.students[1].section.as_str()),
            (Format::Plain, "bob", "")
        );
        // An invisible character in a name is written out, never passed on.
        let shown = read("name,id\n\"Ada\u{202e}evil\",1\n".as_bytes()).unwrap();
        assert_eq!(shown.students[0].name, "Ada\\u{202E}evil");
        for (bytes, says) in [
            (&b""[..], "empty"),
            (b"who,what\nada,1\n", "neither Canvas"),
            (b"name,id\nAda,\n", "line 2: the id is empty"),
            (b"name,id\nAda,1\nBob,1\n", "\"1\" twice"),
            (b"name,id,login\nAda,1,x\nBob,2,x\n", "\"x\" twice"),
            (b"name,id,sis_id\nAda,1,S7\nBob,2,S7\n", "\"S7\" twice"),
            (b"name,id\n\xff,1\n", "not UTF-8"),
            (b"name,id\n", "no student"),
        ] {
            let error = read(bytes).unwrap_err();
            assert!(error.contains(says) && !error.contains('\n'), "{error}");
        }
        let long = format!("name,id\n{},1\n", "a".repeat(MAX_FIELD + 1));
        assert!(read(long.as_bytes()).unwrap_err().contains("over 256 characters"));
        let many = format!("name,id\n{}", (0..=MAX_STUDENTS).map(|i| format!("s,{i}\n")).collect::<String>());
        assert!(read(many.as_bytes()).unwrap_err().contains("over 20000 students"));
    }

    #[test]
    fn canvas_s_test_student_and_column_headers_are_told_apart_and_a_plain_roster_may_give_e_mails() {
        let text = "\u{feff}Student,ID,SIS User ID,SIS Login ID,Section,Homework 2: Decoder (48214),Current Score\r\n\
            \"    Points Possible\",,,,,20,\r\n\
            ,,,,,Manual Posting,\r\n\
            \"Student, Test\",999,,0f3c9a7e5b1d2c4e6f8a0b2c4d6e8f0a1b3c5d7e,Monday and Tuesday,,\r\n\
            \"Student, Test\",998,,,Monday,,\r\n\
            \"Student, Test\",997,S-9,,Monday,,\r\n\
            \"Test Student\",996,,tester,Monday,,\r\n\
            \"Student, Test\",995,,0F3C9A7E5B1D2C4E6F8A0B2C4D6E8F0A1B3C5D7E,Monday,,\r\n\
            \"Student, Test\",994,,0f3c9a7e5b1d2c4e6f8a0b2c4d6e8f0a1b3c5d7,Monday,,\r\n";
        let roster = read(text.as_bytes()).unwrap();
        assert_eq!(roster.assignment_columns, ["Homework 2: Decoder (48214)"]);
        let tests: Vec<bool> = roster.students.iter().map(|s| s.is_canvas_test_student(roster.format)).collect();
        assert_eq!(
            tests,
            [true, true, false, false, false, false],
            "Canvas's own (its hex login, or none) is the test student; one with an SIS id or a login of their own is a real one, whatever the name"
        );
        assert!(!roster.students[0].is_canvas_test_student(Format::Plain), "only Canvas has one");
        assert_eq!(canvas_column("Homework 2: Decoder (48214)"), Some(("Homework 2: Decoder", "48214")));
        assert_eq!(canvas_column("Quiz (part 2) (7)"), Some(("Quiz (part 2)", "7")));
        for not in ["Current Score", "Quiz ()", "Quiz (x1)", " (12)", "Quiz(12)"] {
            assert_eq!(canvas_column(not), None, "{not}");
        }
        let plain = read(b"name,id,email,sis_id\nAda,7,ada@example.org,\nBob,8,,S-8\n").unwrap();
        let fields: Vec<(&str, &str)> = plain.students.iter().map(|s| (s.email.as_str(), s.sis_id.as_str())).collect();
        assert_eq!(fields, [("ada@example.org", ""), ("", "S-8")]);
        assert!(read(b"name,id,email\nAda,7,a@x\nBob,8,a@x\n").unwrap_err().contains("\"a@x\" twice"));
    }

    #[test]
    fn a_canvas_download_name_gives_the_id_canvas_wrote_whatever_the_student_named_the_file() {
        let d = canvas_download("lovelaceada_LATE_101_9001_layer_norm-1.rs").unwrap();
        assert_eq!(d, Download { user_id: "101".into(), late: true, file: "layer_norm.rs".into(), resubmission: 1 });
        let d = canvas_download("lovelaceada_101_9001_homework-cross-attention.ipynb").unwrap();
        assert_eq!((d.late, d.file.as_str()), (false, "homework-cross-attention.ipynb"));
        // A student's file named like another student's download keeps the student's own id.
        let d = canvas_download("evehacker_102_9002_lovelaceada_101_9001_layer_norm.rs").unwrap();
        assert_eq!((d.user_id.as_str(), d.file.as_str()), ("102", "lovelaceada_101_9001_layer_norm.rs"));
        for not in ["layer_norm.rs", "ada_101_layer_norm.rs", "_101_9001_x.rs", "a1_101_9001_x.rs", "ada_101_9001_"] {
            assert_eq!(canvas_download(not), None, "{not}");
        }
        assert_eq!(without_resubmission_number("attention-head.rs"), ("attention-head.rs".into(), 0));
        // Found by fuzzing: a file named "." once came out as no name at all.
        assert_eq!(canvas_download("laca_LITE_0_0_.").map(|d| d.file).as_deref(), Some("."));
        assert_eq!(without_resubmission_number(".rs"), (".rs".into(), 0));
        assert_eq!(without_resubmission_number("notes-12.rs"), ("notes.rs".into(), 12));
    }
}
