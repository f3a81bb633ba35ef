//! The course's points: each exercise's weight in a class's grades is the one its declaration gives
//! (its table in `crates/course/exercises.toml`), unless the course file (`exercises/course.toml`, or `--course`)
//! gives another:
//!
//! ```toml
//! [points]
//! cross_attention = 30   # this course weighs the homework more
//! ```
//!
//! A check of independent parts (two functions graded apart) gives each part its share of the points.
//!
//! A course handed in over a term declares its assignments, each the exercises handed in together (one
//! column of the learning platform's gradebook) and when they are due:
//!
//! ```toml
//! [assignments.attention]
//! exercises = ["scaled_dot_product", "attention_head", "split_heads"]
//! due = "2026-12-01T23:59:00Z"
//! ```
//!
//! An assignment's name is short, for the command line (`--assignment attention`); the learning platforms'
//! own titles, which may hold any character, are given beside it, each as the platform names the column
//! the grades go to, under the key of the export format that writes that platform's file (each format of
//! `anatomy_gradebook::export` owns its key; the course file is read with those keys, and a key no format
//! reads is refused):
//!
//! ```toml
//! [assignments.decoder]
//! exercises = ["cross_attention"]
//! canvas = "Homework 2: Decoder (48214)"   # Canvas's title, with its id in brackets as Canvas's export heads it
//! moodle = "Assignment: Homework 2: Decoder"   # the grade item as Moodle's import lists it
//! ```
//!
//! A course that declares none has one, `exercises`: every exercise, due when `grade --due` says.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Deserialize;
pub use time::OffsetDateTime;

#[cfg(test)]
use anatomy_course::Status;
use anatomy_course::{Outcome, EXERCISES};

mod score;
pub use score::{earned_of, hundredth, score, total, Score};

/// Points per exercise, what lateness costs, and the assignments.
#[derive(Debug, Clone)]
pub struct CourseFile {
    pub points: BTreeMap<String, f64>,
    pub late: Option<Late>,
    /// The assignments the course file declares, in name order (none: one assignment of every exercise).
    pub assignments: Vec<Assignment>,
}

/// Exercises handed in together, as one column of a learning platform's gradebook, and when they are due.
#[derive(Debug, Clone)]
pub struct Assignment {
    pub name: String,
    pub exercises: Vec<&'static anatomy_course::Exercise>,
    pub due: Option<OffsetDateTime>,
    /// The platforms' titles for it, by the key of the export format that reads each (`canvas`: its
    /// column, with Canvas's id, `Homework 2: Decoder (48214)`, or without; `moodle`: its grade item as
    /// Moodle's import lists it, `Assignment: Homework 2: Decoder`).
    pub titles: BTreeMap<String, String>,
}

impl Assignment {
    /// Its title under a format's key, if the course file gives one.
    pub fn title(&self, key: &str) -> Option<&str> {
        self.titles.get(key).map(String::as_str)
    }

    /// What a grading of this assignment grades: its exercises, or those of them `only` names, and its
    /// due date, or `due` when it has none (both is one too many).
    pub fn narrowed(
        &self,
        only: &[String],
        due: Option<OffsetDateTime>,
    ) -> Result<(Vec<&'static anatomy_course::Exercise>, Option<OffsetDateTime>)> {
        let mut chosen = Vec::new();
        for name in only {
            let e = anatomy_course::find(name)?;
            if !self.exercises.iter().any(|x| x.name == e.name) {
                bail!("{} is not an exercise of the assignment {}: leave it out of --only", e.name, self.name);
            }
            chosen.push(e);
        }
        if chosen.is_empty() {
            chosen = self.exercises.clone();
        }
        let due = match (self.due, due) {
            (Some(_), Some(_)) => {
                bail!("the assignment {} has its due date in the course file: leave out --due", self.name)
            }
            (own, given) => own.or(given),
        };
        Ok((chosen, due))
    }
}

/// The assignment of a course that declares none: every exercise.
pub const ALL: &str = "exercises";

/// A late policy (`[late]` in the course file), applied where a due date and the hand-in's time are known:
/// Gradescope's `submission_metadata.json`, or a class graded with `--due` whose folders carry nbgrader's
/// `timestamp.txt`:
///
/// ```toml
/// [late]
/// penalty_per_day = 0.1   # a share of the score lost per day, or part of a day, late
/// max_days = 5            # later than that earns nothing
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Late {
    pub penalty_per_day: f64,
    pub max_days: u32,
}

impl Late {
    /// The share of the score kept by a submission `days` (whole days, rounded up) late.
    pub fn kept(&self, days: u32) -> f64 {
        if days == 0 {
            1.0
        } else if days > self.max_days {
            0.0
        } else {
            (1.0 - self.penalty_per_day * days as f64).max(0.0)
        }
    }

    /// Whole days, rounded up, from the due date to a hand-in: 0 when on time.
    pub fn days(handed_in: OffsetDateTime, due: OffsetDateTime) -> u32 {
        let seconds = (handed_in - due).whole_seconds();
        if seconds <= 0 {
            0
        } else {
            (seconds as u64).div_ceil(86_400).min(u32::MAX as u64) as u32
        }
    }

    /// `points` kept by a hand-in `days` late, to a hundredth of a point, as a grading keeps them.
    pub fn keep(&self, points: f64, days: u32) -> f64 {
        hundredth(points * self.kept(days))
    }

    /// What a student handed in `days` late reads (after their points); on time, what that keeps.
    pub fn words(&self, days: u32) -> String {
        if days == 0 {
            return "Submitted on time: the course keeps all of the points.".into();
        }
        format!(
            "Submitted {days} day{} late: the course keeps {:.0} % of the points (a {:.0} % penalty per day, \
             nothing after {} days).",
            if days == 1 { "" } else { "s" },
            self.kept(days) * 100.0,
            self.penalty_per_day * 100.0,
            self.max_days
        )
    }
}

/// A point in time written as RFC 3339, as the JSON lines keep it.
pub fn format_time(t: OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339).expect("a date within RFC 3339's years")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    points: BTreeMap<String, f64>,
    late: Option<Late>,
    #[serde(default)]
    assignments: BTreeMap<String, AssignmentFile>,
}

/// An `[assignments.NAME]` table: its exercises, its due date, and any other key a platform's title (each
/// held to the keys the formats read in [`assignments`]).
#[derive(Deserialize)]
struct AssignmentFile {
    exercises: Vec<String>,
    due: Option<String>,
    #[serde(flatten)]
    titles: BTreeMap<String, toml::Value>,
}

/// The course file kept with the exercises.
pub fn default_file() -> PathBuf {
    anatomy_course::project_root().join("exercises").join("course.toml")
}

/// The largest course file read: this course's, with every exercise's points and a dozen assignments with
/// their titles, is a few kilobytes, and TOML's reader builds each value it reads.
pub const MAX_COURSE_FILE: u64 = 256 << 10;

/// The course file's text, read within [`MAX_COURSE_FILE`] (a file of any size would be read whole first).
pub fn course_text(path: &Path) -> Result<String> {
    const LIMIT: anatomy_intake::files::Limit = anatomy_intake::files::Limit {
        max: MAX_COURSE_FILE,
        kind: "a course file",
        fix: "give the course file (exercises/course.toml is the example), a few kilobytes of TOML",
    };
    anatomy_intake::files::read_text(path, LIMIT).map_err(anyhow::Error::msg)
}

impl CourseFile {
    /// The course file at `path`, read and checked; `title_keys` are the keys an assignment may give a
    /// platform's title under: the export formats' (`anatomy_gradebook::export::load_course` passes them).
    pub fn load(path: &Path, title_keys: &[&str]) -> Result<CourseFile> {
        CourseFile::parse(path, &course_text(path)?, title_keys)
    }

    /// The course file `path` whose text is `text`, checked, with `title_keys` as in [`CourseFile::load`].
    pub fn parse(path: &Path, text: &str, title_keys: &[&str]) -> Result<CourseFile> {
        let file: File = toml::from_str(text).map_err(|e| {
            anyhow::anyhow!(
                "{} is not a course file ({}): it may have a [points] table, a `name = points` line for each \
                 exercise whose points differ from its default, a [late] table (penalty_per_day, max_days) and \
                 [assignments.NAME] tables (exercises, due, and a platform's title under {})",
                path.display(),
                e.message(),
                key_list(title_keys)
            )
        })?;
        for (name, &p) in &file.points {
            anatomy_course::find(name)
                .with_context(|| format!("{} gives points to an unknown exercise", path.display()))?;
            // −0 passes `>= 0.0` and is written "-0" ("0 of -0 points"): refused with the negatives.
            if !(p.is_finite() && p >= 0.0 && p.is_sign_positive()) {
                bail!(
                    "{}: the points of {name} are {p:?}: give a number of 0 or more, such as {name} = 5",
                    path.display()
                );
            }
        }
        if let Some(late) = file.late {
            if !((0.0..=1.0).contains(&late.penalty_per_day) && late.penalty_per_day.is_sign_positive()) {
                bail!(
                    "{}: [late] penalty_per_day is {:?}: give the share of the score lost per day, between 0 and 1 \
                     (0.1 is 10 %)",
                    path.display(),
                    late.penalty_per_day
                );
            }
        }
        let mut points: BTreeMap<String, f64> = EXERCISES.iter().map(|e| (e.name.to_string(), e.points)).collect();
        points.extend(file.points);
        let assignments = assignments(path, file.assignments, title_keys)?;
        Ok(CourseFile { points, late: file.late, assignments })
    }

    /// The assignment called `name`; with no name, the course's only one (`exercises`, when it declares
    /// none). The error names the ones there are.
    pub fn assignment(&self, name: Option<&str>) -> Result<Assignment> {
        let all = || Assignment {
            name: ALL.into(),
            exercises: EXERCISES.iter().collect(),
            due: None,
            titles: BTreeMap::new(),
        };
        let names = || self.assignments.iter().map(|a| a.name.as_str()).collect::<Vec<_>>().join(", ");
        match (name, self.assignments.as_slice()) {
            (None | Some(ALL), []) => Ok(all()),
            (Some(name), []) => bail!("the course file declares no assignment {name:?}: leave out --assignment, or declare it under [assignments.{name}]"),
            (None, [one]) => Ok(one.clone()),
            (None, _) => bail!("name the assignment: --assignment {}", names().replace(", ", "|")),
            (Some(name), declared) => declared
                .iter()
                .find(|a| a.name == name)
                .cloned()
                .with_context(|| format!("the course file declares no assignment {name:?}: it declares {}", names())),
        }
    }

    /// Every assignment, in order: the declared ones, or the one of every exercise.
    pub fn all_assignments(&self) -> Vec<Assignment> {
        match self.assignments.is_empty() {
            true => vec![self.assignment(None).expect("the one of every exercise")],
            false => self.assignments.clone(),
        }
    }

    /// The most an exercise can earn.
    pub fn max(&self, name: &str) -> f64 {
        self.points.get(name).copied().unwrap_or(0.0)
    }

    /// The most an assignment can earn: the sum over its exercises.
    pub fn most(&self, a: &Assignment) -> f64 {
        a.exercises.iter().map(|e| self.max(e.name)).sum()
    }

    /// What an outcome earns: all of it when passed, a share per passed part for a check of parts.
    pub fn earned(&self, o: &Outcome) -> f64 {
        earned_of(self.max(o.name), o.status, o.parts)
    }

    /// An outcome scored ([`score`]): its points, handed in `late` (days late under the course's policy).
    pub fn score(&self, o: &Outcome, late: Option<u32>) -> Score {
        score(self.max(o.name), o.status, o.parts, late.zip(self.late))
    }
}

/// The keys a title may be given under, as a message lists them.
fn key_list(keys: &[&str]) -> String {
    if keys.is_empty() {
        "none (no export format reads a title)".into()
    } else {
        keys.join(", ")
    }
}

/// A platform's title for an assignment, checked: text of at most 256 characters, without control
/// characters (it goes into a CSV's header).
fn title(path: &Path, name: &str, key: &str, value: toml::Value, keys: &[&str]) -> Result<String> {
    if !keys.contains(&key) {
        bail!(
            "{}: the assignment {name} has `{key}`, which no export format reads: an assignment gives exercises, \
             due and a platform's title under {}",
            path.display(),
            key_list(keys)
        );
    }
    let toml::Value::String(value) = value else {
        bail!("{}: the assignment {name}'s {key} must be the platform's title, in quotes", path.display());
    };
    let fit = !value.trim().is_empty() && value.chars().count() <= 256 && !value.chars().any(char::is_control);
    if !fit {
        bail!(
            "{}: the assignment {name}'s {key} = {value:?} must be the platform's title, at most 256 characters without control characters",
            path.display()
        );
    }
    Ok(value.trim().to_string())
}

/// The declared assignments, checked: a name fit for a column and a command line, known exercises, each
/// exercise in one assignment at most, and a due date that reads.
fn assignments(path: &Path, declared: BTreeMap<String, AssignmentFile>, keys: &[&str]) -> Result<Vec<Assignment>> {
    let mut owner: BTreeMap<&'static str, String> = BTreeMap::new();
    // Per key, the titles given and the assignment that gave each.
    let mut taken: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut out = Vec::new();
    for (name, a) in declared {
        let fit = !name.is_empty()
            && name.len() <= 64
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !fit {
            bail!(
                "{}: the assignment {name:?} needs a name of letters, digits, `_` and `-` (at most 64): give a short name, with the platform's title beside it ([assignments.hw2] canvas = {name:?}, moodle = {name:?})",
                path.display()
            );
        }
        if a.exercises.is_empty() {
            bail!("{}: the assignment {name} lists no exercise", path.display());
        }
        let mut exercises = Vec::new();
        for e in &a.exercises {
            let e = anatomy_course::find(e)
                .with_context(|| format!("{}: the assignment {name} lists an unknown exercise", path.display()))?;
            if let Some(other) = owner.insert(e.name, name.clone()) {
                bail!(
                    "{}: {} is in the assignments {other} and {name}: an exercise belongs to one",
                    path.display(),
                    e.name
                );
            }
            exercises.push(e);
        }
        let due = match &a.due {
            Some(text) => Some(
                anatomy_intake::times::parse_due(text)
                    .map_err(|why| anyhow::anyhow!("{}: the assignment {name}'s due date: {why}", path.display()))?,
            ),
            None => None,
        };
        let mut titles = BTreeMap::new();
        for (key, value) in a.titles {
            let value = title(path, &name, &key, value, keys)?;
            if let Some(other) = taken.entry(key.clone()).or_default().insert(value.clone(), name.clone()) {
                bail!(
                    "{}: the assignments {other} and {name} both give {key} = {value:?}: give each the title of a column of its own",
                    path.display()
                );
            }
            titles.insert(key, value);
        }
        out.push(Assignment { name, exercises, due, titles });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
