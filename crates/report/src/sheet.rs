//! What grading a class writes out, in one place for the command line and every course platform: the
//! table, the JSON lines, the grades' CSV, each student's feedback, the points as a gradebook shows
//! them, and the check's message with its first hint. Each output is a string, written whole.
use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::points::{self, CourseFile};
use super::sandbox::Tier;
use super::{find, mistakes, Exercise, Outcome, Status};

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

    /// What one of a student's outcomes earns, after the late penalty (to a hundredth of a point).
    pub fn earned(&self, row: &Row, o: &Outcome) -> f64 {
        (self.course.earned(o) * self.kept(row) * 100.0).round() / 100.0
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
            "graded {} students × {} exercises in {seconds:.1} s: {passed} of {cells} passed{sandbox}",
            rows.len(),
            self.chosen.len()
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

    /// The grades as CSV: a header of exercises and a total, one row of points per student.
    pub fn csv(&self, rows: &[Row]) -> Result<String> {
        let mut writer = csv::Writer::from_writer(Vec::new());
        let mut header = vec!["student".to_string()];
        header.extend(self.chosen.iter().map(|e| e.name.to_string()));
        if self.due.is_some() {
            header.push("days late".into());
            header.push("extended to".into());
        }
        header.push("total".into());
        header.push("notes".into());
        writer.write_record(&header)?;
        for row in rows {
            // The student's name is the one cell a student chooses: never a formula (see spreadsheet_cell).
            let mut record = vec![spreadsheet_cell(&row.student).into_owned()];
            record.extend(row.outcomes.iter().map(|o| points(self.earned(row, o))));
            if self.due.is_some() {
                record.push(self.days_late(row).map(|d| d.to_string()).unwrap_or_default());
                record.push(row.extension.as_ref().map(|e| points::format_time(e.due)).unwrap_or_default());
            }
            record.push(points(self.total(row)));
            // What went wrong, exercise by exercise: "layer_norm: unbiased_variance; causal_mask: timed_out".
            let notes: Vec<String> =
                row.outcomes.iter().filter_map(|o| Some(format!("{}: {}", o.name, o.mistake.as_ref()?))).collect();
            record.push(notes.join("; "));
            writer.write_record(&record)?;
        }
        Ok(String::from_utf8(writer.into_inner()?)?)
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

/// Writes a file whole (a partial file, then a rename), so that an interrupted run leaves no half of it.
pub fn write_whole(path: &Path, text: &str) -> Result<()> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, text).with_context(|| format!("cannot write {}", path.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("cannot write {}", path.display()))
}

/// A CSV cell that no spreadsheet will run: a cell that starts with `=`, `+`, `-`, `@`, a tab or a
/// carriage return is read as a formula by Excel, LibreOffice and Google Sheets (CSV injection,
/// CWE-1236), so it gets a leading `'`, as OWASP advises. Student names come from LMS exports and display
/// names, so any of them may start that way; the table, the JSON lines and the feedback keep them as they are.
pub fn spreadsheet_cell(cell: &str) -> std::borrow::Cow<'_, str> {
    match cell.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{cell}").into(),
        _ => cell.into(),
    }
}

/// The feedback file of each row, in a feedback folder: the student's label and `.md` (with `_` for a `/`
/// or NUL a label read back from JSON lines may hold, and `_` before a dot name), and where two such names
/// differ only in case (one file on a case-insensitive disk, as macOS's and Windows' are by default),
/// ` (2)`, ` (3)`… before the `.md` of the later ones: no student's feedback overwrites another's.
pub fn feedback_files(rows: &[Row]) -> Vec<String> {
    let mut taken = std::collections::BTreeSet::new();
    rows.iter()
        .map(|row| {
            let mut stem: String = row.student.chars().map(|c| if c == '/' || c == '\0' { '_' } else { c }).collect();
            if stem.is_empty() || stem == "." || stem == ".." {
                stem.insert(0, '_');
            }
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

#[cfg(test)]
mod tests {
    use super::spreadsheet_cell;

    #[test]
    fn cells_that_a_spreadsheet_would_run_are_quoted_and_others_are_kept() {
        for (cell, written) in [
            ("=SUM(A1:A9)", "'=SUM(A1:A9)"),
            ("+cmd", "'+cmd"),
            ("-2+3", "'-2+3"),
            ("@sum", "'@sum"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("ada", "ada"),
            ("a=b", "a=b"),
            ("", ""),
            ("105", "105"),
            ("2.50", "2.50"),
        ] {
            assert_eq!(spreadsheet_cell(cell), written, "{cell:?}");
        }
    }
}
