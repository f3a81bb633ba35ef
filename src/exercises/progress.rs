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
    let path = progress_file();
    let text = serde_json::to_string_pretty(&progress)?;
    let partial = path.with_extension("json.partial");
    fs::write(&partial, text + "\n").with_context(|| format!("cannot write {}", partial.display()))?;
    fs::rename(&partial, &path).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes out the stub of every exercise whose file is missing (a fresh copy of the course has none);
/// returns the names written.
pub fn write_missing_stubs() -> Result<Vec<&'static str>> {
    let mut written = Vec::new();
    for e in EXERCISES {
        let file = e.file();
        if !file.exists() {
            fs::create_dir_all(file.parent().expect("in exercises/"))?;
            fs::write(&file, e.stub).with_context(|| format!("cannot write {}", file.display()))?;
            written.push(e.name);
        }
    }
    Ok(written)
}

/// Puts the untouched stub back and forgets the exercise's progress.
pub fn reset(e: &Exercise) -> Result<()> {
    let file = e.file();
    fs::write(&file, e.stub).with_context(|| format!("cannot write {}", file.display()))?;
    let mut progress = load();
    if progress.remove(e.name).is_some() {
        let text = serde_json::to_string_pretty(&progress)?;
        fs::write(progress_file(), text + "\n")?;
    }
    Ok(())
}

/// The student's file of each exercise, as submissions labelled by the exercise's name.
pub fn own_files(chosen: &[&'static Exercise]) -> Vec<grading::Submission> {
    chosen.iter().map(|&e| grading::Submission { label: e.name.to_string(), exercise: e, file: e.file() }).collect()
}
