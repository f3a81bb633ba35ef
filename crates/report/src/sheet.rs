//! What grading a class writes out, in one place for the command line and every course platform: the
//! table, the JSON lines, the grades' CSV, each student's feedback, the points as a gradebook shows
//! them, and the check's message with its first hint. Each output is a string, written whole.
use std::collections::BTreeMap;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use anatomy_checks::mistakes;
use anatomy_course::{find, Exercise, Outcome, Status};
use anatomy_grade::points::{self, CourseFile};
use anatomy_grade::sandbox::Tier;

/// One student's grades, when they handed in, where the class folder says (nbgrader's `timestamp.txt`),
/// and their extension, if they have one.
#[derive(Debug, Clone)]
pub struct Row {
    pub student: String,
    pub outcomes: Vec<Outcome>,
    pub handed_in: Option<OffsetDateTime>,
    pub extension: Option<Extension>,
}

/// A due date of the student's own (an accommodation, an illness), with why: the late policy counts from
/// it instead of the class's. The reason is the instructor's record; the student's feedback shows only
/// the date.
#[derive(Debug, Clone, PartialEq)]
pub struct Extension {
    pub due: OffsetDateTime,
    pub reason: String,
}

impl Row {
    /// How many of the student's exercises passed.
    pub fn passed(&self) -> usize {
        self.outcomes.iter().filter(|o| o.status == Status::Passed).count()
    }
}

/// What a class was graded on: the exercises, their points, the sandbox and the due date, when one was
/// given (with the course's late policy, a student handed in late keeps a share of every point).
pub struct Sheet<'a> {
    pub chosen: &'a [&'static Exercise],
    pub course: &'a CourseFile,
    pub tier: &'a Tier,
    pub due: Option<OffsetDateTime>,
}

impl Sheet<'_> {
    /// How many days (rounded up) after the due date the student handed in: `None` without a due date or
    /// without the student's hand-in time.
    pub fn days_late(&self, row: &Row) -> Option<u32> {
        Some(points::Late::days(row.handed_in?, self.due_of(row)?))
    }

    /// The due date a student is held to: their extension's, else the class's.
    pub fn due_of(&self, row: &Row) -> Option<OffsetDateTime> {
        self.due.map(|due| row.extension.as_ref().map_or(due, |e| e.due))
    }

    /// The share of the points a student keeps under the course's late policy (1 when on time or unknown).
    pub fn kept(&self, row: &Row) -> f64 {
        match (self.course.late, self.days_late(row)) {
            (Some(policy), Some(days)) => policy.kept(days),
            _ => 1.0,
        }
    }

    /// One of a student's outcomes scored ([`points::score`]), late by the student's days late.
    pub fn score(&self, row: &Row, o: &Outcome) -> points::Score {
        self.course.score(o, self.days_late(row))
    }

    /// What one of a student's outcomes earns, after the late penalty (to a hundredth of a point).
    pub fn earned(&self, row: &Row, o: &Outcome) -> f64 {
        self.score(row, o).points
    }

    /// A student's points.
    pub fn total(&self, row: &Row) -> f64 {
        row.outcomes.iter().map(|o| self.earned(row, o)).sum()
    }

    /// The most a student can earn.
    pub fn max_total(&self) -> f64 {
        self.chosen.iter().map(|e| self.course.max(e.name)).sum()
    }

    /// The class as a Markdown table: the sandbox first, then one row per student.
    pub fn table(&self, rows: &[Row]) -> String {
        let names: Vec<&str> = self.chosen.iter().map(|e| e.name).collect();
        let mut text = String::new();
        match self.tier {
            Tier::None => text += "**Graded with --no-sandbox: the students' code ran with the grader's rights.**\n\n",
            _ => text += &format!("Sandbox: {}.\n\n", self.tier.words()),
        }
        text += &format!("| student | {} | passed | points |\n", names.join(" | "));
        text += &format!("{}|\n", "|---".repeat(names.len() + 3));
        for row in rows {
            let cells: Vec<&str> = row.outcomes.iter().map(|o| o.status.words()).collect();
            let passed = row.passed();
            text += &format!(
                "| {} | {} | {passed}/{} | {}/{} |\n",
                anatomy_intake::names::markdown(&row.student),
                cells.join(" | "),
                row.outcomes.len(),
                points(self.total(row)),
                points(self.max_total())
            );
        }
        text
    }

    /// The closing line of a class's grading: how many students, exercises and passes, in how long, and
    /// in which sandbox.
    pub fn closing_line(&self, rows: &[Row], seconds: f64) -> String {
        let cells = rows.len() * self.chosen.len();
        let passed: usize = rows.iter().map(Row::passed).sum();
        let sandbox = match self.tier {
            Tier::None => " (no sandbox)".to_string(),
            _ => format!(", each student in a sandbox ({})", self.tier.words()),
        };
        format!(
            "graded {} × {} in {seconds:.1} s: {passed} of {cells} passed{sandbox}",
            crate::counted(rows.len(), "student"),
            crate::counted(self.chosen.len(), "exercise")
        )
    }

    /// One student's line of `--json`: the typed [`GradeLine`], which `anatomy exercises report` reads back.
    pub fn line(&self, row: &Row) -> GradeLine {
        let by_exercise = |value: &dyn Fn(&Outcome) -> Option<String>| -> BTreeMap<String, String> {
            row.outcomes.iter().filter_map(|o| Some((o.name.to_string(), value(o)?))).collect()
        };
        GradeLine {
            student: row.student.clone(),
            late: self.due.map(|due| LateFields {
                due: points::format_time(due),
                handed_in: row.handed_in.map(points::format_time),
                days_late: self.days_late(row),
                extended_to: row.extension.as_ref().map(|e| points::format_time(e.due)),
                extension_reason: row.extension.as_ref().map(|e| e.reason.clone()),
            }),
            statuses: by_exercise(&|o| Some(o.status.words().to_string())),
            passed: row.passed(),
            total: row.outcomes.len(),
            points: row.outcomes.iter().map(|o| (o.name.to_string(), self.earned(row, o))).collect(),
            total_points: self.total(row),
            max_points: self.max_total(),
            sandbox: *self.tier != Tier::None,
            sandbox_tier: self.tier.name().to_string(),
            messages: by_exercise(&|o| {
                (o.status != Status::Passed && o.status != Status::NotDone).then(|| o.message.clone())
            }),
            mistakes: by_exercise(&|o| o.mistake.clone()),
            parts: row.outcomes.iter().filter_map(|o| Some((o.name.to_string(), o.parts?))).collect(),
        }
    }

    /// One student as a JSON object (a line of `--json`): [`Sheet::line`], its keys in order.
    pub fn json(&self, row: &Row) -> serde_json::Value {
        serde_json::to_value(self.line(row)).expect("a grade line is plain data")
    }

    /// The grades as CSV ([`Csv`]): a header of exercises and a total, one row of points per student.
    pub fn csv(&self, rows: &[Row]) -> Result<String> {
        let mut file = Csv::default();
        let mut header = vec!["student".to_string()];
        header.extend(self.chosen.iter().map(|e| e.name.to_string()));
        if self.due.is_some() {
            header.push("days late".into());
            header.push("extended to".into());
        }
        header.push("total".into());
        header.push("notes".into());
        file.record(header.into_iter().map(CsvCell::Text));
        for row in rows {
            // The student's name is the one cell a student chooses: a text cell, guarded and quoted.
            let mut record = vec![CsvCell::Text(row.student.clone())];
            record.extend(row.outcomes.iter().map(|o| CsvCell::Number(Some(self.earned(row, o)))));
            if self.due.is_some() {
                record.push(CsvCell::Number(self.days_late(row).map(f64::from)));
                record.push(CsvCell::Text(
                    row.extension.as_ref().map(|e| points::format_time(e.due)).unwrap_or_default(),
                ));
            }
            record.push(CsvCell::Number(Some(self.total(row))));
            // What went wrong, exercise by exercise: "layer_norm: unbiased_variance; causal_mask: timed_out".
            let notes: Vec<String> =
                row.outcomes.iter().filter_map(|o| Some(format!("{}: {}", o.name, o.mistake.as_ref()?))).collect();
            record.push(CsvCell::Text(notes.join("; ")));
            file.record(record);
        }
        Ok(file.into_text())
    }

    /// A student's feedback: only their own results, the checks' messages and the first hint.
    pub fn feedback(&self, row: &Row) -> String {
        let mut text = format!(
            "# Feedback for {}\n\n{} of {} points; {} of {} exercises passed (graded in the {} sandbox).\n\n| exercise | \
             status | points |\n| --- | --- | --- |\n",
            anatomy_intake::names::markdown(&row.student),
            points(self.total(row)),
            points(self.max_total()),
            row.passed(),
            row.outcomes.len(),
            self.tier.name()
        );
        for o in &row.outcomes {
            text += &format!(
                "| `{}` | {} | {}/{} |\n",
                o.name,
                o.status.words(),
                points(self.earned(row, o)),
                points(self.course.max(o.name))
            );
        }
        if let (Some(_), Some(e)) = (self.due, &row.extension) {
            text += &format!("\nYour due date was extended to {}.\n", points::format_time(e.due));
        }
        if let (Some(policy), Some(days)) = (self.course.late, self.days_late(row).filter(|&d| d > 0)) {
            text += &format!("\n{}\n", policy.words(days));
        }
        for o in row.outcomes.iter().filter(|o| o.status != Status::Passed) {
            text += &format!("\n## `{}`: {}\n\n", o.name, o.status.words());
            if let Some(id) = &o.mistake {
                text += &format!("Mistake: `{id}` ({}).\n\n", mistakes::words(id));
            }
            text += &message_and_hint(o);
        }
        text
    }
}

/// One student's grading as a line of `anatomy exercises grade --json`: written by [`Sheet::line`] and
/// read back by [`GradeLine::row`] (for `anatomy exercises report`), one declaration for both ways. Besides
/// the named keys, the line has one key per graded exercise, its status in words ("passed", "failed", …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradeLine {
    pub student: String,
    /// Present when the class was graded with a due date.
    #[serde(flatten)]
    pub late: Option<LateFields>,
    /// Each graded exercise's status in words, by name (the line's other keys, so read after the rest).
    #[serde(flatten)]
    pub statuses: BTreeMap<String, String>,
    pub passed: usize,
    pub total: usize,
    pub points: BTreeMap<String, f64>,
    pub total_points: f64,
    pub max_points: f64,
    pub sandbox: bool,
    pub sandbox_tier: String,
    /// The message of every exercise that failed or does not compile.
    pub messages: BTreeMap<String, String>,
    pub mistakes: BTreeMap<String, String>,
    /// For a check of independent parts: how many passed, of how many.
    pub parts: BTreeMap<String, (usize, usize)>,
}

/// The due date's part of a grade line: the class's due date, when the student handed in (`null` where the
/// class folder does not say), how many days late, rounded up (from the student's extension when they have
/// one), and that extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LateFields {
    pub due: String,
    pub handed_in: Option<String>,
    pub days_late: Option<u32>,
    /// The student's own due date and its reason, when they have an extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension_reason: Option<String>,
}

impl GradeLine {
    /// The student's row again, for a report made without grading: each chosen exercise's status, message,
    /// mistake and parts.
    pub fn row(&self, chosen: &[&'static Exercise]) -> Result<Row> {
        let student = &self.student;
        let mut outcomes = Vec::new();
        for e in chosen {
            let words = self.statuses.get(e.name).with_context(|| {
                format!("{student}'s line has no status for {}: make the report from the same --only", e.name)
            })?;
            let status = Status::ALL
                .into_iter()
                .find(|s| s.words() == words)
                .with_context(|| format!("{student}: {words:?} is not a status"))?;
            outcomes.push(Outcome {
                name: e.name,
                label: format!("{student}/{}", e.name),
                status,
                message: self.messages.get(e.name).cloned().unwrap_or_default(),
                parts: self.parts.get(e.name).copied(),
                mistake: self.mistakes.get(e.name).cloned(),
                output: None,
            });
        }
        let handed_in =
            self.late.as_ref().and_then(|l| l.handed_in.as_deref()).and_then(anatomy_intake::times::parse_time);
        let extension = self.late.as_ref().and_then(|l| {
            let due = anatomy_intake::times::parse_time(l.extended_to.as_deref()?)?;
            Some(Extension { due, reason: l.extension_reason.clone().unwrap_or_default() })
        });
        Ok(Row { student: student.clone(), outcomes, handed_in, extension })
    }
}

/// What a student reads of an exercise not passed, in Markdown: the check's message, fenced, then the
/// first hint (feedback files, Gradescope's tests).
pub fn message_and_hint(o: &Outcome) -> String {
    let mut text = format!("~~~~text\n{}\n~~~~\n", o.message.replace("~~~~", "~ ~ ~ ~"));
    if let Some(hint) = find(o.name).expect("registered").hint_levels().first() {
        text += &format!("\nHint: {hint}\n");
    }
    text
}

/// Points as an LMS's gradebook shows them: whole numbers without a decimal point.
pub fn points(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p:.2}")
    }
}

/// Where a spreadsheet may cut a cell's text into cells of its own: the separators of the CSV dialects
/// (`,`, and `;` in the locales whose decimal mark is a comma), a tab, and a line's end.
const CELL_BREAKS: [char; 5] = [',', ';', '\t', '\r', '\n'];

/// A CSV cell that no spreadsheet will run, the one rule every CSV the grader writes follows (through
/// [`Csv`]): a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is read as a formula
/// by Excel, LibreOffice and Google Sheets (CSV injection, CWE-1236), so it gets a leading `'`, as OWASP
/// advises; and since a spreadsheet that splits a line on `;`, `,` or tabs (a European locale's, or one
/// that ignores the quotes) shows each piece of the cell as a cell of its own, every piece after a `,`, a
/// `;`, a tab or a line break that starts with one of `=`, `+`, `-`, `@` (after any spaces or `"`) gets a
/// `'` before that character too: `x;=1+2` is written `x;'=1+2`, `Robert'); DROP TABLE students;--`
/// ends `;'--`. Nothing is dropped, a cell guarded already is left as it is, and a name such as
/// `Núñez, José` or `Smith-Jones` is unchanged. Student names come from LMS exports and display names, so
/// any of them may hold such a piece; the table, the JSON lines and the feedback keep them as they are.
pub fn spreadsheet_cell(cell: &str) -> std::borrow::Cow<'_, str> {
    let mut guarded = String::with_capacity(cell.len() + 2);
    if cell.starts_with(['\t', '\r']) {
        guarded.push('\'');
    }
    // At the start of a piece: before its first character that is not a space or a quote.
    let mut piece_starts = true;
    for c in cell.chars() {
        if piece_starts && matches!(c, '=' | '+' | '-' | '@') {
            guarded.push('\'');
        }
        if CELL_BREAKS.contains(&c) {
            piece_starts = true;
        } else if !(c.is_whitespace() || c == '"') {
            piece_starts = false;
        }
        guarded.push(c);
    }
    if guarded.len() == cell.len() {
        cell.into()
    } else {
        guarded.into()
    }
}

/// One cell of a CSV the grader writes: text (a name, an id, a login, a section, a note, a header, a
/// date), or a number (points, days late), which a gradebook's importer must read as one; `None` is a
/// cell left empty (never graded), which Canvas and Moodle leave as it is.
#[derive(Debug, Clone, PartialEq)]
pub enum CsvCell {
    Text(String),
    Number(Option<f64>),
}

/// A CSV file as every export writes it: the grades' CSV ([`Sheet::csv`]) and the gradebook's Canvas,
/// Moodle and own exports. Each text cell passes [`spreadsheet_cell`] and is written in double quotes (a
/// `"` in it doubled, RFC 4180), so that no `,`, `;`, tab or line break inside it ends the cell for any
/// reader that honours quotes; an empty text cell is written as nothing, as Canvas's own export writes it.
/// Each number is written bare ([`points`]: `5`, `2.50`), as the platforms' importers read a grade. Records
/// end with `\n`.
#[derive(Debug, Clone, Default)]
pub struct Csv {
    text: String,
}

impl Csv {
    /// Adds one record.
    pub fn record(&mut self, cells: impl IntoIterator<Item = CsvCell>) {
        let start = self.text.len();
        for (i, cell) in cells.into_iter().enumerate() {
            if i > 0 {
                self.text.push(',');
            }
            match cell {
                CsvCell::Text(text) if text.is_empty() => {}
                CsvCell::Text(text) => {
                    self.text.push('"');
                    self.text += &spreadsheet_cell(&text).replace('"', "\"\"");
                    self.text.push('"');
                }
                CsvCell::Number(Some(n)) => self.text += &points(n),
                CsvCell::Number(None) => {}
            }
        }
        // A record of one empty cell is written `""`, or a reader would see no record at all.
        if self.text.len() == start {
            self.text += "\"\"";
        }
        self.text.push('\n');
    }

    /// The file's text.
    pub fn into_text(self) -> String {
        self.text
    }
}

/// The feedback file of each row, in a feedback folder: the student's label and `.md`, and where two such
/// names differ only in case (one file on a case-insensitive disk, as macOS's and Windows' are by default),
/// ` (2)`, ` (3)`… before the `.md` of the later ones: no student's feedback overwrites another's. No name
/// is hidden or special (see [`plain_stem`]).
pub fn feedback_files(rows: &[Row]) -> Vec<String> {
    let mut taken = std::collections::BTreeSet::new();
    rows.iter()
        .map(|row| {
            let mut stem = plain_stem(&row.student);
            // A file name holds at most 255 bytes, and a label can be four times its folder's name: a
            // long one is cut and told apart by the MD5 of the whole label.
            if stem.len() > 180 {
                use md5::{Digest, Md5};
                let cut = (0..=180).rev().find(|&i| stem.is_char_boundary(i)).unwrap_or(0);
                stem = format!("{}~{:.8x}", &stem[..cut], Md5::digest(row.student.as_bytes()));
                stem.truncate(cut + 9);
            }
            let mut name = format!("{stem}.md");
            let mut n = 1;
            // Distinct as a disk that normalises and folds case sees names (macOS's), where they are opened.
            while !taken.insert(anatomy_intake::names::disk_key(&name)) {
                n += 1;
                name = format!("{stem} ({n}).md");
            }
            name
        })
        .collect()
}

/// A label made an ordinary file name (a feedback file is this and `.md`, ` (2)` before the `.md` of a
/// case-twin): `_` for a separator (`/`, `\\`), a NUL or any control character a label read back from JSON
/// lines may hold; `_` before a name a file list would hide or a command would read as an option (a
/// leading `.`, `-` or `~`, or none at all) and before a name Windows keeps for a device (`CON`, `nul.txt`,
/// `COM1`…); `_` after a trailing dot or space, which Windows drops.
pub fn plain_stem(label: &str) -> String {
    let mut stem: String =
        label.chars().map(|c| if c == '/' || c == '\\' || c.is_control() { '_' } else { c }).collect();
    let base = stem.split('.').next().unwrap_or_default().trim_end().to_ascii_uppercase();
    let device = matches!(base.as_str(), "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$")
        || (base.len() == 4
            && (base.starts_with("COM") || base.starts_with("LPT"))
            && base[3..].chars().all(|c| c.is_ascii_digit()));
    if stem.is_empty() || stem.starts_with(['.', '-', '~']) || device {
        stem.insert(0, '_');
    }
    if stem.ends_with(['.', ' ']) {
        stem.push('_');
    }
    stem
}

/// The tests' reader of a CSV as every reader sees it, shared with the gradebook's export tests.
#[cfg(test)]
#[path = "../../../tests/common/csv_read_back.rs"]
mod csv_read_back;

#[cfg(test)]
mod tests {
    use super::*;
    use anatomy_course::EXERCISES;
    use csv_read_back::read_back;

    /// Issue 64's names, each as every CSV must hold it (read back with quotes undone), and an honest one.
    const NAMES: [(&str, &str); 6] = [
        ("Robert'); DROP TABLE students;--", "Robert'); DROP TABLE students;'--"),
        ("x;=1+2", "x;'=1+2"),
        ("a,=HYPERLINK(\"http://x\")", "a,'=HYPERLINK(\"http://x\")"),
        ("tab\t@SUM(1)", "tab\t'@SUM(1)"),
        ("=1+2", "'=1+2"),
        ("Núñez, José", "Núñez, José"),
    ];

    #[test]
    fn cells_that_a_spreadsheet_would_run_are_quoted_and_others_are_kept() {
        let more = [
            ("=SUM(A1:A9)", "'=SUM(A1:A9)"),
            ("+cmd", "'+cmd"),
            ("-2+3", "'-2+3"),
            ("@sum", "'@sum"),
            ("\t=1", "'\t'=1"),
            ("\r=1", "'\r'=1"),
            (" =1", " '=1"),
            ("a, -1", "a, '-1"),
            ("a;\"=1", "a;\"'=1"),
            ("line\n+1", "line\n'+1"),
            ("a;;@b", "a;;'@b"),
            ("ada", "ada"),
            ("a=b", "a=b"),
            ("Smith-Jones", "Smith-Jones"),
            ("5 - 3", "5 - 3"),
            ("a;b, c", "a;b, c"),
            ("", ""),
            ("105", "105"),
            ("2.50", "2.50"),
        ];
        for (cell, written) in NAMES.into_iter().chain(more) {
            assert_eq!(spreadsheet_cell(cell), written, "{cell:?}");
            assert_eq!(spreadsheet_cell(written), written, "{written:?} is guarded already");
        }
    }

    #[test]
    fn the_grades_csv_quotes_every_text_cell_and_guards_every_piece_of_one() {
        let chosen: Vec<&'static Exercise> = EXERCISES[..2].iter().collect();
        let points = EXERCISES.iter().map(|e| (e.name.to_string(), e.points)).collect();
        let course = CourseFile { points, late: None, assignments: Vec::new() };
        let due = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        let sheet = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: Some(due) };
        let outcome = |student: &str, e: &&'static Exercise, passed: bool| Outcome {
            name: e.name,
            label: format!("{student}/{}", e.name),
            status: if passed { Status::Passed } else { Status::Failed },
            message: String::new(),
            parts: None,
            mistake: (!passed).then(|| "unbiased_variance".to_string()),
            output: None,
        };
        let rows: Vec<Row> = NAMES
            .iter()
            .map(|&(student, _)| Row {
                student: student.into(),
                outcomes: chosen.iter().enumerate().map(|(i, e)| outcome(student, e, i == 0)).collect(),
                handed_in: Some(due),
                extension: Some(Extension { due, reason: "=1+2".into() }),
            })
            .collect();
        let text = sheet.csv(&rows).unwrap();
        let read = read_back(&text, &[1, 2, 3, 5]);
        let header = ["student", chosen[0].name, chosen[1].name, "days late", "extended to", "total", "notes"];
        assert_eq!(read[0], header);
        assert_eq!(read.len(), 1 + NAMES.len());
        for ((_, written), record) in NAMES.iter().zip(&read[1..]) {
            assert_eq!(&record[0], written);
            assert_eq!(record[3], "0");
            assert_eq!(record[4], points::format_time(due));
            assert_eq!(record[6], format!("{}: unbiased_variance", chosen[1].name));
        }
        assert!(text.starts_with("\"student\",\""), "{text}");
        assert!(text.contains("\n\"x;'=1+2\","), "{text}");
    }

    #[test]
    fn a_record_of_one_empty_cell_is_still_a_record() {
        let mut file = Csv::default();
        file.record([CsvCell::Text(String::new())]);
        file.record([CsvCell::Number(None), CsvCell::Text("a\"b".into()), CsvCell::Number(Some(2.5))]);
        assert_eq!(file.into_text(), "\"\"\n,\"a\"\"b\",2.50\n");
    }

    fn at(text: &str) -> OffsetDateTime {
        OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap()
    }

    /// The course's default points (5 each here), with or without a late policy of 10 % a day for 5 days.
    fn course_with(late: bool) -> CourseFile {
        let late = late.then_some(points::Late { penalty_per_day: 0.1, max_days: 5 });
        CourseFile {
            points: EXERCISES.iter().map(|e| (e.name.to_string(), e.points)).collect(),
            late,
            assignments: vec![],
        }
    }

    /// Two exercises of 5 points each: layer_norm, then causal_mask (a check of two parts).
    fn pair() -> Vec<&'static Exercise> {
        vec![find("layer_norm").unwrap(), find("causal_mask").unwrap()]
    }

    /// A student with layer_norm as given and causal_mask failed, one of its two parts passed.
    fn student(name: &str, layer_norm: Status, mistake: Option<&str>) -> Row {
        let cell = |e: &'static str, status, parts, mistake: Option<&str>| Outcome {
            name: e,
            label: format!("{name}/{e}"),
            status,
            message: format!("{e} says ~~~~ that"),
            parts,
            mistake: mistake.map(str::to_string),
            output: None,
        };
        let outcomes = vec![
            cell("layer_norm", layer_norm, None, mistake),
            cell("causal_mask", Status::Failed, Some((1, 2)), Some(mistakes::UNNAMED)),
        ];
        Row { student: name.into(), outcomes, handed_in: None, extension: None }
    }

    #[test]
    fn points_show_whole_numbers_bare_and_others_to_a_hundredth() {
        let shown: Vec<String> = [5.0, 0.0, 105.0, 2.5, 0.1 + 0.2, 22.0 / 3.0].into_iter().map(points).collect();
        assert_eq!(shown, ["5", "0", "105", "2.50", "0.30", "7.33"]);
    }

    #[test]
    fn a_late_hand_in_keeps_its_share_of_each_cell_to_a_hundredth_counted_from_an_extension_if_any() {
        let (chosen, course) = (pair(), course_with(true));
        let sheet =
            Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: Some(at("2026-03-01T12:00:00Z")) };
        let mut row = student("ada", Status::Passed, None);
        assert_eq!((row.passed(), sheet.days_late(&row), sheet.kept(&row)), (1, None, 1.0), "no hand-in time");
        assert_eq!(sheet.total(&row), 7.5, "5 + half of 5");
        row.handed_in = Some(at("2026-03-02T18:00:00Z")); // 30 hours late: two days begun
        assert_eq!((sheet.days_late(&row), sheet.kept(&row)), (Some(2), 0.8));
        let earned: Vec<f64> = row.outcomes.iter().map(|o| sheet.earned(&row, o)).collect();
        assert_eq!((earned, sheet.total(&row), sheet.max_total()), (vec![4.0, 2.0], 6.0, 10.0));
        row.extension = Some(Extension { due: at("2026-03-02T17:00:00Z"), reason: "flu".into() });
        assert_eq!((sheet.due_of(&row), sheet.days_late(&row)), (Some(at("2026-03-02T17:00:00Z")), Some(1)));
        assert_eq!(sheet.total(&row), 6.75, "0.9 of 5 and of 2.5");
        row.handed_in = Some(at("2026-03-09T12:00:00Z"));
        assert_eq!((sheet.days_late(&row), sheet.total(&row)), (Some(7), 0.0), "past the policy's 5 days");
        let no_policy = course_with(false);
        let sheet = Sheet { course: &no_policy, ..sheet };
        assert_eq!((sheet.days_late(&row), sheet.kept(&row), sheet.total(&row)), (Some(7), 1.0, 7.5));
        let undated = Sheet { due: None, ..sheet };
        assert_eq!((undated.due_of(&row), undated.days_late(&row)), (None, None), "an extension needs a due date");
    }

    #[test]
    fn the_table_names_the_sandbox_escapes_names_and_counts_passes_and_points() {
        let (chosen, course) = (pair(), course_with(false));
        let tier = Tier::Bubblewrap("bwrap".into());
        let sheet = Sheet { chosen: &chosen, course: &course, tier: &tier, due: None };
        let rows = [student("ada", Status::Passed, None), student("b|o`b", Status::NotDone, None)];
        assert_eq!(
            sheet.table(&rows),
            "Sandbox: bubblewrap (namespaces, seccomp, limits).\n\n\
             | student | layer_norm | causal_mask | passed | points |\n|---|---|---|---|---|\n\
             | ada | passed | failed | 1/2 | 7.50/10 |\n\
             | b\\|o\\`b | not done | failed | 0/2 | 2.50/10 |\n"
        );
        assert_eq!(
            sheet.closing_line(&rows, 2.96),
            "graded 2 students × 2 exercises in 3.0 s: 1 of 4 passed, each student in a sandbox (bubblewrap \
             (namespaces, seccomp, limits))"
        );
        let open = Sheet { tier: &Tier::None, ..sheet };
        assert!(open.table(&[]).starts_with(
            "**Graded with --no-sandbox: the students' code ran with the grader's rights.**\n\n| student |"
        ));
        assert_eq!(
            open.closing_line(&[], 0.04),
            "graded 0 students × 2 exercises in 0.0 s: 0 of 0 passed (no sandbox)"
        );
        let one = [chosen[0]];
        let single = Sheet { chosen: &one, ..open };
        assert_eq!(
            single.closing_line(&rows[..1], 1.0),
            "graded 1 student × 1 exercise in 1.0 s: 1 of 1 passed (no sandbox)"
        );
    }

    #[test]
    fn feedback_shows_the_students_own_points_lateness_and_each_unpassed_exercise_with_its_mistake_and_hint() {
        let (chosen, course) = (pair(), course_with(true));
        let tier = Tier::Bubblewrap("bwrap".into());
        let sheet = Sheet { chosen: &chosen, course: &course, tier: &tier, due: Some(at("2026-03-01T12:00:00Z")) };
        let mut row = student("a|da", Status::Passed, None);
        row.handed_in = Some(at("2026-03-02T18:00:00Z"));
        let hint = &find("causal_mask").unwrap().hint_levels()[0];
        assert_eq!(
            sheet.feedback(&row),
            format!(
                "# Feedback for a\\|da\n\n6 of 10 points; 1 of 2 exercises passed (graded in the bubblewrap \
                 sandbox).\n\n| exercise | status | points |\n| --- | --- | --- |\n| `layer_norm` | passed | 4/5 |\n\
                 | `causal_mask` | failed | 2/5 |\n\nSubmitted 2 days late: the course keeps 80 % of the points (a \
                 10 % penalty per day, nothing after 5 days).\n\n## `causal_mask`: failed\n\n\
                 Mistake: `unnamed` (a failure no named mistake covers).\n\n\
                 ~~~~text\ncausal_mask says ~ ~ ~ ~ that\n~~~~\n\nHint: {hint}\n"
            )
        );
        // A stop's words come from the grader's list; a not-done exercise has no mistake line.
        let row = student("bo", Status::NotDone, None);
        let text = Sheet { due: None, ..sheet }.feedback(&row);
        assert!(text.contains("\n## `layer_norm`: not done\n\n~~~~text\nlayer_norm says"), "{text}");
        assert!(!text.contains("late") && text.matches("Mistake:").count() == 1, "{text}");
        let row = student("cy", Status::DoesNotCompile, Some("does_not_compile"));
        let text = Sheet { due: None, ..sheet }.feedback(&row);
        assert!(text.contains("Mistake: `does_not_compile` (the compiler found an error in the file)."), "{text}");
    }

    #[test]
    fn a_grade_line_keeps_statuses_as_keys_and_the_due_dates_fields_and_reads_back_as_the_same_row() {
        let (chosen, course) = (pair(), course_with(true));
        let tier = Tier::Bubblewrap("bwrap".into());
        let sheet = Sheet { chosen: &chosen, course: &course, tier: &tier, due: Some(at("2026-03-01T12:00:00Z")) };
        let mut row = student("ada", Status::Passed, None);
        row.handed_in = Some(at("2026-03-02T18:00:00Z"));
        let json = sheet.json(&row);
        assert_eq!((json["layer_norm"].as_str(), json["causal_mask"].as_str()), (Some("passed"), Some("failed")));
        assert_eq!((json["due"].as_str(), json["days_late"].as_u64()), (Some("2026-03-01T12:00:00Z"), Some(2)));
        assert_eq!(json["handed_in"], "2026-03-02T18:00:00Z");
        assert!(json.get("late").is_none() && json.get("extended_to").is_none(), "flattened, and no extension: {json}");
        assert_eq!((json["total_points"].as_f64(), json["max_points"].as_f64()), (Some(6.0), Some(10.0)));
        assert_eq!(
            (json["points"]["layer_norm"].as_f64(), json["points"]["causal_mask"].as_f64()),
            (Some(4.0), Some(2.0))
        );
        assert_eq!((json["sandbox"].as_bool(), json["sandbox_tier"].as_str()), (Some(true), Some("bubblewrap")));
        assert_eq!(json["parts"]["causal_mask"], serde_json::json!([1, 2]));
        assert_eq!(json["messages"], serde_json::json!({"causal_mask": "causal_mask says ~~~~ that"}), "passed: none");
        assert_eq!(json["mistakes"], serde_json::json!({"causal_mask": "unnamed"}));
        let line: GradeLine = serde_json::from_str(&serde_json::to_string(&json).unwrap()).unwrap();
        assert_eq!(line, sheet.line(&row));
        let back = line.row(&chosen).unwrap();
        assert_eq!((back.student.as_str(), back.handed_in, back.extension), ("ada", row.handed_in, None));
        let read: Vec<_> =
            back.outcomes.iter().map(|o| (o.label.as_str(), o.status, o.parts, o.message.len())).collect();
        assert_eq!(
            read,
            [("ada/layer_norm", Status::Passed, None, 0), ("ada/causal_mask", Status::Failed, Some((1, 2)), 26)]
        );
        // An extension goes out with its reason and comes back.
        row.extension = Some(Extension { due: at("2026-03-02T20:00:00Z"), reason: "a funeral".into() });
        let line: GradeLine = serde_json::from_value(sheet.json(&row)).unwrap();
        assert_eq!(line.late.as_ref().and_then(|l| l.days_late), Some(0));
        assert_eq!(line.row(&chosen).unwrap().extension, row.extension);
        // Without a due date the line has no date fields at all.
        let undated = Sheet { due: None, ..sheet }.json(&row);
        assert!(["due", "handed_in", "days_late", "extended_to"].iter().all(|k| undated.get(k).is_none()), "{undated}");
    }

    #[test]
    fn a_grade_line_without_a_chosen_exercise_or_with_an_unknown_status_is_refused_by_name() {
        let (chosen, course) = (pair(), course_with(false));
        let sheet = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
        let mut line = sheet.line(&student("ada", Status::Passed, None));
        line.statuses.remove("causal_mask");
        let error = line.row(&chosen).unwrap_err().to_string();
        assert_eq!(error, "ada's line has no status for causal_mask: make the report from the same --only");
        assert_eq!(line.row(&chosen[..1]).unwrap().outcomes.len(), 1, "fewer exercises chosen read fine");
        line.statuses.insert("causal_mask".into(), "not_done".into());
        assert_eq!(line.row(&chosen).unwrap_err().to_string(), "ada: \"not_done\" is not a status", "words, not ids");
        line.statuses.insert("causal_mask".into(), "does not compile".into());
        assert_eq!(line.row(&chosen).unwrap().outcomes[1].status, Status::DoesNotCompile);
    }

    #[test]
    fn the_grades_csv_without_a_due_date_has_no_date_columns_and_notes_every_mistake() {
        let (chosen, course) = (pair(), course_with(false));
        let sheet = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
        let rows = [student("ada", Status::Failed, Some("unbiased_variance")), student("bo", Status::Passed, None)];
        assert_eq!(
            sheet.csv(&rows).unwrap(),
            "\"student\",\"layer_norm\",\"causal_mask\",\"total\",\"notes\"\n\
             \"ada\",0,2.50,2.50,\"layer_norm: unbiased_variance; causal_mask: unnamed\"\n\
             \"bo\",5,2.50,7.50,\"causal_mask: unnamed\"\n"
        );
    }

    #[test]
    fn a_message_is_fenced_so_that_no_fence_in_it_closes_the_block_and_the_first_hint_follows() {
        let o = Outcome {
            name: "layer_norm",
            label: "ada/layer_norm".into(),
            status: Status::Failed,
            message: "~~~~\n# not a heading\n~~~~~".into(),
            parts: None,
            mistake: None,
            output: None,
        };
        let hint = "Work along the last axis and keep it, so the statistics broadcast back: `x.mean_dim(-1, true, \
                    Kind::Float)` has shape `[batch, seq, 1]`.";
        assert_eq!(
            message_and_hint(&o),
            format!("~~~~text\n~ ~ ~ ~\n# not a heading\n~ ~ ~ ~~\n~~~~\n\nHint: {hint}\n")
        );
    }

    #[test]
    fn no_feedback_file_is_hidden_or_special() {
        let labels = [
            ".bashrc",
            "..",
            "-rf",
            "~root",
            "CON",
            "nul.txt",
            "com1",
            "LPT9.md",
            "dots.",
            "space ",
            "back\\slash",
            "line\nbreak",
            "esc\u{1b}[2J",
            "COM10",
            "Ada",
        ];
        let rows: Vec<Row> = labels
            .iter()
            .map(|s| Row { student: s.to_string(), outcomes: Vec::new(), handed_in: None, extension: None })
            .collect();
        let expected = [
            "_.bashrc.md",
            "_.._.md",
            "_-rf.md",
            "_~root.md",
            "_CON.md",
            "_nul.txt.md",
            "_com1.md",
            "_LPT9.md.md",
            "dots._.md",
            "space _.md",
            "back_slash.md",
            "line_break.md",
            "esc_[2J.md",
            "COM10.md",
            "Ada.md",
        ];
        assert_eq!(feedback_files(&rows), expected);
    }

    #[test]
    fn a_long_or_unusual_label_gets_a_file_name_of_its_own() {
        use md5::{Digest, Md5};
        let rows: Vec<Row> =
            ["nul\0byte", ".", "e\u{301}te", "\u{e9}te", "x".repeat(200).as_str(), "x".repeat(201).as_str()]
                .iter()
                .map(|s| Row { student: s.to_string(), outcomes: Vec::new(), handed_in: None, extension: None })
                .collect();
        let files = feedback_files(&rows);
        let md5 = |label: &str| format!("{:x}", Md5::digest(label.as_bytes()))[..8].to_string();
        let (long, longer) = ("x".repeat(200), "x".repeat(201));
        let expected = [
            "nul_byte.md".to_string(),
            "_._.md".to_string(),
            "e\u{301}te.md".to_string(),
            "\u{e9}te (2).md".to_string(),
            format!("{}~{}.md", "x".repeat(180), md5(&long)),
            format!("{}~{}.md", "x".repeat(180), md5(&longer)),
        ];
        assert_eq!(files, expected, "the composed and decomposed é are one name on macOS's disk");
        assert_ne!(md5(&long), md5(&longer));
        // A cut never splits a character: 90 two-byte characters are 180 bytes, and the 91st starts past them.
        let accents = Row { student: "é".repeat(120), outcomes: Vec::new(), handed_in: None, extension: None };
        let name = &feedback_files(&[accents])[0];
        assert_eq!(name.strip_suffix(".md").unwrap().split('~').next().unwrap(), "é".repeat(90));
    }
}
