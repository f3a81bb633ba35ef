//! Whose hand-in is whose, from the roster: a Canvas bulk download ("Download Submissions": every file at
//! the top, named `lastfirst[_LATE]_USERID_SUBMISSIONID_FILE`) by the Canvas id in each name, or one
//! folder per student (nbgrader's `submitted/`, a GitHub Classroom clone, a hand-made class) by the
//! folder's name, read as a login, a platform id or an institution id. A folder renamed to something the
//! roster does not know is listed as unmatched, never graded as a new student; both sides' leftovers are
//! listed before anything is graded.
use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use anatomy_grade::handin::{self, HandIn};
use anatomy_intake::names::label;
use anatomy_intake::roster::canvas_download;

use crate::roster::Student;

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
        lines
    }
}

/// Matches a class folder's hand-ins to the roster's students.
pub fn match_hand_ins(submissions: &Path, students: &[Student]) -> Result<Matched> {
    let top: Vec<std::path::PathBuf> = std::fs::read_dir(submissions)
        .with_context(|| format!("{} is not a folder of hand-ins", submissions.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    let is_download = |p: &std::path::PathBuf| {
        std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_dir())
            && p.file_name().and_then(|n| n.to_str()).and_then(canvas_download).is_some()
    };
    let (found, unmatched, layout) = if top.iter().any(is_download) {
        let (found, unmatched) = canvas(top, students);
        (found, unmatched, "a Canvas download, by the Canvas id in each file's name")
    } else {
        let (found, unmatched) = folders(submissions, students)?;
        (found, unmatched, "one folder per student, by login, platform id or institution id")
    };
    let missing = students.iter().filter(|s| !found.contains_key(&s.key)).cloned().collect();
    let found = students.iter().filter_map(|s| Some((s.clone(), found.get(&s.key)?.clone()))).collect();
    Ok(Matched { found, unmatched, missing, layout })
}

/// A Canvas download: every file at the top, grouped by the Canvas id in its name.
fn canvas(top: Vec<std::path::PathBuf>, students: &[Student]) -> (BTreeMap<i64, HandIn>, Vec<String>) {
    let by_id: BTreeMap<&str, &Student> = students.iter().map(|s| (s.lms_id.as_str(), s)).collect();
    let mut files: BTreeMap<i64, Vec<(String, std::path::PathBuf)>> = BTreeMap::new();
    let mut unmatched = Vec::new();
    let mut top = top;
    top.sort();
    for path in top {
        let shown = label(path.file_name().unwrap_or_default());
        let Some(d) = path.file_name().and_then(|n| n.to_str()).and_then(canvas_download) else {
            unmatched.push(format!("{shown}: not a Canvas download's name (lastfirst_USERID_SUBMISSIONID_FILE)"));
            continue;
        };
        match by_id.get(d.user_id.as_str()) {
            Some(s) => files.entry(s.key).or_default().push((d.file, path)),
            None => unmatched.push(format!("{shown}: Canvas id {} is not in the roster", d.user_id)),
        }
    }
    (files.into_iter().map(|(k, f)| (k, HandIn::Files(f))).collect(), unmatched)
}

/// One folder per student, by its name read as a login, a platform id, an institution id or a label.
fn folders(submissions: &Path, students: &[Student]) -> Result<(BTreeMap<i64, HandIn>, Vec<String>)> {
    let mut found = BTreeMap::new();
    let mut unmatched = Vec::new();
    for (name, folder) in handin::students(submissions)? {
        let who = students
            .iter()
            .find(|s| [&s.login, &s.lms_id, &s.sis_id, &s.label].iter().any(|k| !k.is_empty() && **k == name));
        match who {
            Some(s) if found.contains_key(&s.key) => {
                unmatched.push(format!("{name}: a second folder of {} (one folder per student)", s.label))
            }
            Some(s) => {
                found.insert(s.key, HandIn::Folder(folder));
            }
            None => unmatched.push(format!("{name}: no student of the roster has this login or id")),
        }
    }
    Ok((found, unmatched))
}
