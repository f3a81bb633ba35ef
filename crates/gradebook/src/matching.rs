//! Whose hand-in is whose, from the roster: a Canvas bulk download ("Download Submissions": every file at
//! the top, named `lastfirst[_LATE]_USERID_SUBMISSIONID_FILE`) by the Canvas id in each name, or one
//! folder per student (nbgrader's `submitted/`, a GitHub Classroom clone, a hand-made class) by the
//! folder's name, read as a login, a platform id or an institution id. A folder renamed to something the
//! roster does not know is listed as unmatched, never graded as a new student; both sides' leftovers are
//! listed before anything is graded. Canvas's test student's hand-ins are set aside, said, and not graded.
//!
//! A download has no hand-in time, only Canvas's `LATE` mark, which Canvas counts from its own due date.
//! The students Canvas marked are listed for the instructor to give a late penalty (`gradebook late`);
//! those the gradebook gave an extension of that assignment are listed apart, with their own due date:
//! the mark says nothing of it, so the instructor reads the hand-in time in SpeedGrader and records it
//! (`late STUDENT=TIME`, counted from their own due date) when it is after.
use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use anatomy_grade::handin::{self, HandIn};
use anatomy_grade::points::{format_time, Assignment};
use anatomy_intake::names::label;
use anatomy_intake::roster::canvas_download;

use crate::roster::Student;
use crate::Gradebook;

/// The hand-ins of a class folder against the roster.
#[derive(Debug, Clone, PartialEq)]
pub struct Matched {
    /// Each student with a hand-in, in the roster's order (by label).
    pub found: Vec<(Student, HandIn)>,
    /// Hand-ins no student of the roster claims, each with why.
    pub unmatched: Vec<String>,
    /// Students of the roster without a hand-in.
    pub missing: Vec<Student>,
    /// How the folder was read.
    pub layout: &'static str,
    /// Students whose Canvas download Canvas marked `LATE` (a download carries no hand-in time, so the late
    /// policy cannot count their days: this is what Canvas says), less those with an extension.
    pub marked_late: Vec<String>,
    /// Students Canvas marked `LATE` who have an extension of the assignment, with their own due date:
    /// Canvas counted from its due date, so whether they are late is the hand-in time's to say.
    pub extended: Vec<(String, String)>,
    /// Hand-ins of Canvas's test student, set aside and not graded.
    pub set_aside: Vec<String>,
    /// The assignment whose extensions were applied.
    pub assignment: Option<String>,
    /// The keys of `marked_late`'s students.
    late_keys: Vec<i64>,
}

impl Matched {
    /// What a person reads before grading: how many matched, and the leftovers of either side.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "{} hand-ins matched to the roster ({}); {} unmatched; {} students without a hand-in",
            self.found.len(),
            self.layout,
            self.unmatched.len(),
            self.missing.len()
        )];
        lines.extend(self.unmatched.iter().map(|u| format!("unmatched: {u}")));
        lines.extend(self.missing.iter().map(|s| format!("no hand-in: {} ({}, id {})", s.label, s.name, s.lms_id)));
        lines.extend(self.set_aside.iter().map(|f| format!("set aside, not graded: {f} (Canvas's test student)")));
        let name = self.assignment.as_deref().unwrap_or("NAME");
        lines.extend(self.extended.iter().map(|(who, due)| {
            format!(
                "marked LATE by Canvas: {who}, extended to {due}; Canvas marks LATE against its own due date: check SpeedGrader's hand-in time and record it with `cargo anatomy exercises gradebook late --assignment {name} {who}=TIME` if it is after {due}"
            )
        }));
        if !self.marked_late.is_empty() {
            lines.push(format!(
                "marked LATE by Canvas (a download has no hand-in time: the late policy does not count these until you give their days late: cargo anatomy exercises gradebook late --assignment {name} STUDENT=DAYS …): {}",
                self.marked_late.join(", ")
            ));
        }
        if let (None, false) = (&self.assignment, self.marked_late.is_empty()) {
            lines.push(
                "(give --assignment NAME to list apart the students with an extension of that assignment)".into(),
            );
        }
        lines
    }

    /// Lists apart, with their own due date, the students Canvas marked `LATE` who have an extension of the
    /// assignment (Canvas counted from its own due date, not theirs).
    pub fn apply_extensions(&mut self, assignment: &str, extensions: &BTreeMap<i64, anatomy_report::sheet::Extension>) {
        self.assignment = Some(assignment.to_string());
        let (mut late, mut keys) = (Vec::new(), Vec::new());
        for (key, label) in self.late_keys.iter().zip(&self.marked_late) {
            match extensions.get(key) {
                Some(e) => self.extended.push((label.clone(), format_time(e.due))),
                None => {
                    late.push(label.clone());
                    keys.push(*key);
                }
            }
        }
        (self.marked_late, self.late_keys) = (late, keys);
    }
}

impl Gradebook {
    /// Matches a class folder's hand-ins to the roster ([`match_hand_ins`]), with the extensions of
    /// `assignment` applied to Canvas's `LATE` marks.
    pub fn match_hand_ins(&self, submissions: &Path, assignment: Option<&Assignment>) -> Result<Matched> {
        self.require_roster()?;
        let mut matched = match_hand_ins(submissions, &self.students()?, &self.test_students()?)?;
        if let Some(a) = assignment {
            matched.apply_extensions(&a.name, &self.extensions(&a.name)?);
        }
        Ok(matched)
    }
}

/// Matches a class folder's hand-ins to the roster's students; the hand-ins of Canvas's test students
/// (`tests`) are set aside.
pub fn match_hand_ins(submissions: &Path, students: &[Student], tests: &[Student]) -> Result<Matched> {
    let top: Vec<std::path::PathBuf> = std::fs::read_dir(submissions)
        .with_context(|| format!("{} is not a folder of hand-ins", submissions.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    let is_download = |p: &std::path::PathBuf| {
        std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_dir())
            && p.file_name().and_then(|n| n.to_str()).and_then(canvas_download).is_some()
    };
    let everyone: Vec<Student> = students.iter().chain(tests).cloned().collect();
    let (mut found, unmatched, layout, late) = if top.iter().any(is_download) {
        let (found, unmatched, late) = canvas(top, &everyone);
        (found, unmatched, "a Canvas download, by the Canvas id in each file's name", late)
    } else {
        let (found, unmatched) = folders(submissions, &everyone)?;
        (found, unmatched, "one folder per student, by login, platform id or institution id", Default::default())
    };
    let set_aside = tests.iter().filter_map(|t| found.remove(&t.key)).flat_map(shown).collect();
    let missing = students.iter().filter(|s| !found.contains_key(&s.key)).cloned().collect();
    let late: Vec<&Student> = students.iter().filter(|s| late.contains(&s.key)).collect();
    let (marked_late, late_keys) =
        (late.iter().map(|s| s.label.clone()).collect(), late.iter().map(|s| s.key).collect());
    let found = students.iter().filter_map(|s| Some((s.clone(), found.get(&s.key)?.clone()))).collect();
    let extended = Vec::new();
    Ok(Matched { found, unmatched, missing, layout, marked_late, extended, set_aside, assignment: None, late_keys })
}

/// What a hand-in is called in a list: a folder's name, or each of a download's files'.
fn shown(hand_in: HandIn) -> Vec<String> {
    let name = |p: &Path| label(p.file_name().unwrap_or_default());
    match hand_in {
        HandIn::Folder(folder) => vec![name(&folder)],
        HandIn::Files(files) => files.iter().map(|(_, p)| name(p)).collect(),
    }
}

/// One student's files of a download, by the name the student gave each (Canvas's resubmission number
/// taken off), each with that number.
type Files = BTreeMap<String, Vec<(u32, std::path::PathBuf)>>;

/// A student's files as the grader finds them: of an exercise file (`NAME.rs`) handed in more than once,
/// the last (Canvas's highest number); every notebook, the last first (a notebook's name is not its
/// exercise: the grader reads its cells).
fn hand_in(files: Files) -> HandIn {
    let mut kept = Vec::new();
    for (name, mut versions) in files {
        versions.sort_by_key(|v| std::cmp::Reverse(v.0));
        let keep = if name.ends_with(".rs") { 1 } else { versions.len() };
        kept.extend(versions.into_iter().take(keep).map(|(_, path)| (name.clone(), path)));
    }
    HandIn::Files(kept)
}

/// A Canvas download: every file at the top, grouped by the Canvas id in its name; with the students
/// Canvas marked late.
fn canvas(
    top: Vec<std::path::PathBuf>,
    students: &[Student],
) -> (BTreeMap<i64, HandIn>, Vec<String>, std::collections::BTreeSet<i64>) {
    // Only a student imported from Canvas's export has Canvas's id: a plain roster's id is another number.
    let by_id: BTreeMap<&str, &Student> =
        students.iter().filter(|s| s.from_canvas).map(|s| (s.lms_id.as_str(), s)).collect();
    let mut files: BTreeMap<i64, Files> = BTreeMap::new();
    let mut late = std::collections::BTreeSet::new();
    let mut unmatched = Vec::new();
    let mut top = top;
    top.sort();
    for path in top {
        let shown = label(path.file_name().unwrap_or_default());
        let Some(d) = path.file_name().and_then(|n| n.to_str()).and_then(canvas_download) else {
            unmatched.push(format!("{shown}: not a Canvas download's name (lastfirst_USERID_SUBMISSIONID_FILE)"));
            continue;
        };
        let Some(s) = by_id.get(d.user_id.as_str()) else {
            unmatched.push(format!(
                "{shown}: Canvas id {} is not in the roster (of its students imported from Canvas's export)",
                d.user_id
            ));
            continue;
        };
        if d.late {
            late.insert(s.key);
        }
        files.entry(s.key).or_default().entry(d.file).or_default().push((d.resubmission, path));
    }
    (files.into_iter().map(|(k, f)| (k, hand_in(f))).collect(), unmatched, late)
}

/// One folder per student, by its name read as a login, a platform id, an institution id or a label.
fn folders(submissions: &Path, students: &[Student]) -> Result<(BTreeMap<i64, HandIn>, Vec<String>)> {
    let mut found = BTreeMap::new();
    let mut unmatched = Vec::new();
    for (name, folder) in handin::students(submissions)? {
        // A folder's name is read as a value, never as `login:` and the like: those are for the instructor.
        let who: Vec<&Student> = students.iter().filter(|s| s.holds(&name)).collect();
        match who.as_slice() {
            [s] if found.contains_key(&s.key) => {
                unmatched.push(format!("{name}: a second folder of {} (one folder per student)", s.label))
            }
            [s] => {
                found.insert(s.key, HandIn::Folder(folder));
            }
            [] => unmatched.push(format!("{name}: no student of the roster has this login or id")),
            many => unmatched.push(format!(
                "{name}: the login or id of {} students ({}): rename the folder to the platform id of the one it belongs to",
                many.len(),
                many.iter().map(|s| s.label.as_str()).collect::<Vec<_>>().join(", ")
            )),
        }
    }
    Ok((found, unmatched))
}
