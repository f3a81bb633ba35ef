//! The student's side of the exercises: their files in `exercises/`, the progress kept beside them, and
//! getting an untouched stub back.
//!
//! Progress is the status of each exercise's last grading, kept in `exercises/.progress.json` (git-ignored):
//! `anatomy exercises list` shows it without grading anything, and `watch` starts at the first exercise
//! that has not passed.
use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use anyhow::{Context, Result};

use super::{grading, Exercise, Outcome, Status, EXERCISES};

/// Where progress is kept.
pub fn progress_file() -> PathBuf {
    super::exercises_dir().join(".progress.json")
}

/// The last known status of each exercise (exercises never graded are absent).
pub fn load() -> BTreeMap<String, Status> {
    fs::read_to_string(progress_file()).ok().and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default()
}

/// Remembers the outcomes of grading the student's own files.
pub fn record(outcomes: &[Outcome]) -> Result<()> {
    let mut progress = load();
    for o in outcomes {
        progress.insert(o.name.to_string(), o.status);
    }
    save(&progress)
}

/// Writes the progress file whole (a partial file, then a rename), so that a crash never leaves half of it.
fn save(progress: &BTreeMap<String, Status>) -> Result<()> {
    let path = progress_file();
    let text = serde_json::to_string_pretty(progress)?;
    let partial = path.with_extension("json.partial");
    fs::write(&partial, text + "\n").with_context(|| format!("cannot write {}", partial.display()))?;
    fs::rename(&partial, &path).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes out the stub of every exercise whose file is missing (a fresh copy of the course has none).
pub fn write_missing_stubs() -> Result<()> {
    for e in EXERCISES {
        let file = e.file();
        if !file.exists() {
            fs::create_dir_all(file.parent().expect("in exercises/"))?;
            fs::write(&file, e.stub).with_context(|| format!("cannot write {}", file.display()))?;
        }
    }
    Ok(())
}

/// Puts the untouched stub back and forgets the exercise's progress.
pub fn reset(e: &Exercise) -> Result<()> {
    let file = e.file();
    fs::write(&file, e.stub).with_context(|| format!("cannot write {}", file.display()))?;
    let mut progress = load();
    if progress.remove(e.name).is_some() {
        save(&progress)?;
    }
    Ok(())
}

/// The student's file of each exercise, as submissions labelled by the exercise's name.
pub fn own_files(chosen: &[&'static Exercise]) -> Vec<grading::Submission> {
    grading::by_name(chosen, Exercise::file)
}

/// The first exercise, in course order, that has not passed yet.
pub fn first_unfinished() -> Option<&'static Exercise> {
    let progress = load();
    EXERCISES.iter().find(|e| progress.get(e.name) != Some(&Status::Passed))
}

/// When the student's file of `e` was last saved (none if it cannot be read).
pub fn saved_at(e: &Exercise) -> Option<std::time::SystemTime> {
    std::fs::metadata(e.file()).and_then(|m| m.modified()).ok()
}

/// ✓ passed, · not done, ✗ failed or does not compile.
pub fn mark(status: Option<Status>) -> &'static str {
    match status {
        Some(Status::Passed) => "✓",
        Some(Status::Failed | Status::DoesNotCompile) => "✗",
        Some(Status::NotDone) | None => "·",
    }
}

/// The list with progress, as `anatomy exercises list` and the watch mode's `l` show it.
pub fn list_text() -> String {
    let progress = load();
    let mut text = String::new();
    let mut done = 0;
    for e in EXERCISES {
        let status = progress.get(e.name).copied();
        done += usize::from(status == Some(Status::Passed));
        let state = match status {
            Some(Status::Passed) => "done",
            Some(Status::Failed | Status::DoesNotCompile) => "failing",
            _ => "not done",
        };
        let homework = if e.homework { " (the chapter's homework)" } else { "" };
        text += &format!("{} {:>2}. {:<22} {:<9} {}{homework}\n", mark(status), e.number(), e.name, state, e.summary);
    }
    text += &format!("{done} of {} done; progress is kept in {}\n", EXERCISES.len(), relative(&progress_file()));
    text
}

/// A path as the learner reads it: from the project's root.
pub fn relative(path: &std::path::Path) -> String {
    path.strip_prefix(grading::project_root()).unwrap_or(path).display().to_string()
}

/// The reference solution, once the exercise has passed.
pub fn solution(e: &Exercise) -> Result<String> {
    let file = e.solution_file();
    if !file.exists() {
        anyhow::bail!("this copy of the course has no solutions/ folder (instructors keep it back)");
    }
    if load().get(e.name) != Some(&Status::Passed) {
        anyhow::bail!(
            "{} has not passed yet: solve it first (`anatomy exercises check {}`), then the solution opens",
            e.name,
            e.name
        );
    }
    std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))
}
