//! The student's side of the exercises: their files in `exercises/`, the progress kept beside them, and
//! getting an untouched stub back.
//!
//! Progress is the status of each exercise's last grading, kept in `exercises/.progress.json` (git-ignored):
//! `anatomy exercises list` shows it without grading anything, and `watch` starts at the first exercise
//! that has not passed. Beside each status, how many attempts ended in each named mistake: a learner who
//! makes the same one again is told so, and which hint to read next. An attempt is a version of the file:
//! checking an unchanged file again (or saving it unchanged in watch mode) does not count twice.
use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use anatomy_course::{Exercise, Outcome, Status, EXERCISES};

use crate::grading;

/// Where progress is kept.
pub fn progress_file() -> PathBuf {
    anatomy_course::exercises_dir().join(".progress.json")
}

/// What is kept of one exercise: the status of its last grading, per mistake id how many attempts ended
/// in that mistake, and a fingerprint (MD5) of the file last graded, so that the same file is one attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressEntry {
    pub status: Status,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mistakes: BTreeMap<String, usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
}

/// An entry as a progress file may hold it: today's, or the bare status that files before mistakes were
/// counted held.
#[derive(Deserialize)]
#[serde(untagged)]
enum Stored {
    ProgressEntry(ProgressEntry),
    Status(Status),
}

/// Every exercise's entry (exercises never graded are absent; an unreadable file counts as none).
pub fn entries() -> BTreeMap<String, ProgressEntry> {
    let stored: BTreeMap<String, Stored> =
        fs::read_to_string(progress_file()).ok().and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default();
    stored
        .into_iter()
        .map(|(name, s)| match s {
            Stored::ProgressEntry(e) => (name, e),
            Stored::Status(status) => (name, ProgressEntry { status, mistakes: BTreeMap::new(), last: None }),
        })
        .collect()
}

/// The last known status of each exercise (exercises never graded are absent).
pub fn load() -> BTreeMap<String, Status> {
    entries().into_iter().map(|(name, e)| (name, e.status)).collect()
}

/// A named mistake made again: the exercise, the mistake's id and how many earlier gradings made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Repeat {
    pub exercise: &'static str,
    pub mistake: String,
    pub earlier: usize,
}

/// Remembers the outcomes of grading the student's own files, counting each named mistake once per
/// version of the file; returns the named mistakes that earlier attempts had made too.
pub fn record(outcomes: &[Outcome]) -> Result<Vec<Repeat>> {
    let graded: Vec<Option<Vec<u8>>> =
        outcomes.iter().map(|o| anatomy_course::find(o.name).ok().and_then(|e| fs::read(e.file()).ok())).collect();
    record_graded(outcomes, &graded)
}

/// [`record`], with each outcome's file as it was graded (the watch mode reads it before grading: the file
/// may be saved again while the grade runs, and this grade's verdict belongs to the bytes it graded).
pub fn record_graded(outcomes: &[Outcome], graded: &[Option<Vec<u8>>]) -> Result<Vec<Repeat>> {
    let mut progress = entries();
    let mut repeats = Vec::new();
    for (o, bytes) in outcomes.iter().zip(graded) {
        let fingerprint = bytes.as_deref().map(fingerprint);
        let entry = progress.entry(o.name.to_string()).or_insert(ProgressEntry {
            status: o.status,
            mistakes: BTreeMap::new(),
            last: None,
        });
        let same_file = fingerprint.is_some() && entry.last == fingerprint;
        entry.status = o.status;
        entry.last = fingerprint;
        if let Some(id) = &o.mistake {
            let count = entry.mistakes.entry(id.clone()).or_default();
            if !same_file {
                *count += 1;
            }
            let named = anatomy_checks::mistakes::NAMED.iter().any(|n| n.exercise == o.name && n.id == *id);
            // This attempt is counted: the ones before it are the rest.
            if named && *count > 1 {
                repeats.push(Repeat { exercise: o.name, mistake: id.clone(), earlier: *count - 1 });
            }
        }
    }
    save(&progress)?;
    Ok(repeats)
}

/// What `anatomy exercises check` reports: each exercise's outcome, and how many passed (as `--json` prints it).
#[derive(Debug, Serialize)]
pub struct CheckSummary {
    pub solutions: bool,
    pub passed: usize,
    pub total: usize,
    pub exercises: Vec<Outcome>,
}

impl CheckSummary {
    pub fn new(solutions: bool, outcomes: Vec<Outcome>) -> CheckSummary {
        let passed = outcomes.iter().filter(|o| o.status == Status::Passed).count();
        CheckSummary { solutions, passed, total: outcomes.len(), exercises: outcomes }
    }

    /// The report as a learner reads it: a line per exercise (with the mistakes made again), the count,
    /// and what to do next.
    pub fn text(&self, repeats: &[Repeat]) -> String {
        let what = if self.solutions { "reference solutions" } else { "exercises" };
        let mut text = String::new();
        for o in &self.exercises {
            let message = match o.status {
                Status::DoesNotCompile => format!("does not compile:\n{}", o.message),
                _ => o.message.clone(),
            };
            text += &format!("{} {:<22} {message}\n", mark(Some(o.status)), o.name);
            text += &printed_block(o);
            for r in repeats.iter().filter(|r| r.exercise == o.name) {
                text += &format!("  {}\n", r.words());
            }
        }
        text += &format!("{} of {} {what} passed\n", self.passed, self.total);
        if let Some(o) = self.exercises.iter().find(|o| o.status != Status::Passed).filter(|_| !self.solutions) {
            text += &format!("{}\n", next_line(anatomy_course::find(o.name).expect("registered")));
        }
        text
    }
}

/// What the learner's code printed during its check, under its verdict: each line behind a bar, so that it
/// cannot be taken for the grader's words (already escaped and cut by `anatomy_intake::printed`).
pub fn printed_block(o: &Outcome) -> String {
    let Some(output) = &o.output else { return String::new() };
    let mut text = String::from("  your code printed:\n");
    for line in output.lines() {
        text += &format!("  │ {line}\n");
    }
    text
}

/// The MD5 of a file's bytes, in hex: enough to tell one version of a learner's file from another.
fn fingerprint(bytes: &[u8]) -> String {
    use md5::{Digest, Md5};
    format!("{:x}", Md5::digest(bytes))
}

impl Repeat {
    /// What a learner stuck on one mistake reads: how often it came before, and which hint to read next.
    pub fn words(&self) -> String {
        let e = anatomy_course::find(self.exercise).expect("registered");
        let levels = e.hint_levels().len().max(1);
        let next = (self.earlier + 1).min(levels);
        let times = if self.earlier == 1 { "once".to_string() } else { format!("{} times", self.earlier) };
        format!(
            "`{}` again: {times} before in your earlier attempts at {}. Read hint {next} of {levels} in {}",
            self.mistake,
            self.exercise,
            relative(&e.hint_file())
        )
    }
}

/// Writes the progress file whole (a partial file, then a rename), so that a crash never leaves half of it.
fn save(progress: &BTreeMap<String, ProgressEntry>) -> Result<()> {
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
    let mut progress = entries();
    if progress.remove(e.name).is_some() {
        save(&progress)?;
    }
    Ok(())
}

/// What `anatomy exercises check` grades: the student's own files (a missing one written as the stub
/// first), or with `solutions` the reference solutions, where this copy of the course has them.
pub fn to_check(chosen: &[&'static Exercise], solutions: bool) -> Result<Vec<grading::Submission>> {
    if !solutions {
        write_missing_stubs()?;
        return Ok(own_files(chosen));
    }
    if !chosen.iter().all(|e| e.solution_file().exists()) {
        anyhow::bail!("this copy of the course has no solutions/ folder: --solutions works in the instructor's copy");
    }
    Ok(grading::by_name(chosen, Exercise::solution_file))
}

/// The line that tells a learner what to do next about an exercise not passed.
pub fn next_line(e: &Exercise) -> String {
    format!(
        "next: {} — edit {}, then run `cargo anatomy exercises check {}` (or `cargo anatomy exercises watch`); stuck? read {}",
        e.name,
        relative(&e.file()),
        e.name,
        relative(&e.hint_file())
    )
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

/// The first exercise after `e`, in course order and from the start again past the last, that has not
/// passed yet (`e` itself last).
pub fn next_unfinished(e: &Exercise) -> Option<&'static Exercise> {
    let progress = load();
    let at = EXERCISES.iter().position(|x| x.name == e.name).unwrap_or(0);
    EXERCISES.iter().cycle().skip(at + 1).take(EXERCISES.len()).find(|x| progress.get(x.name) != Some(&Status::Passed))
}

/// The exercise a learner names by its number in the list (`7`) or by its name (`cross_attention`).
pub fn chosen(text: &str) -> Result<&'static Exercise> {
    let text = text.trim();
    match text.parse::<usize>() {
        Ok(n) => EXERCISES
            .iter()
            .find(|e| e.number() == n)
            .ok_or_else(|| anyhow::anyhow!("there is no exercise {n}: the list numbers them 1 to {}", EXERCISES.len())),
        Err(_) => Ok(anatomy_course::find(text)?),
    }
}

/// Progress as a bar, as the watch mode shows it under each verdict: `[████░░░░] 4/18 passed`.
pub fn progress_bar(width: usize) -> String {
    let progress = load();
    let done = EXERCISES.iter().filter(|e| progress.get(e.name) == Some(&Status::Passed)).count();
    bar(done, EXERCISES.len(), width)
}

fn bar(done: usize, total: usize, width: usize) -> String {
    let filled = (done * width).checked_div(total).unwrap_or(0);
    format!("[{}{}] {done}/{total} passed", "█".repeat(filled), "░".repeat(width - filled))
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

/// The list with progress, as `anatomy exercises list` shows it.
pub fn list_text() -> String {
    list_with(None)
}

/// The list with progress and the current exercise marked (`▶`), as the watch mode's `l` shows it.
pub fn list_with(current: Option<&Exercise>) -> String {
    let progress = load();
    let mut text = String::new();
    let mut done = 0;
    for e in EXERCISES {
        if let Some(c) = current {
            text += if c.name == e.name { "▶ " } else { "  " };
        }
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
    path.strip_prefix(anatomy_course::project_root()).unwrap_or(path).display().to_string()
}

/// The reference solution, once the exercise has passed.
pub fn solution(e: &Exercise) -> Result<String> {
    let file = e.solution_file();
    if !file.exists() {
        anyhow::bail!("this copy of the course has no solutions/ folder (instructors keep it back)");
    }
    if load().get(e.name) != Some(&Status::Passed) {
        anyhow::bail!(
            "{} has not passed yet: solve it first (`cargo anatomy exercises check {}`), then the solution opens",
            e.name,
            e.name
        );
    }
    std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))
}
