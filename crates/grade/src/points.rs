//! The course's points: each exercise's weight in a class's grades is the one its declaration gives
//! (`anatomy_course::for_each_exercise`), unless the course file (`exercises/course.toml`, or `--course`)
//! gives another:
//!
//! ```toml
//! [points]
//! cross_attention = 30   # this course weighs the homework more
//! ```
//!
//! A check of independent parts (two functions graded apart) gives each part its share of the points.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Deserialize;
pub use time::OffsetDateTime;

use crate::{Outcome, Status, EXERCISES};

/// Points per exercise, and what lateness costs.
#[derive(Debug, Clone)]
pub struct CourseFile {
    pub points: BTreeMap<String, f64>,
    pub late: Option<Late>,
}

/// A late policy (`[late]` in the course file), applied where a due date and the hand-in's time are known:
/// Gradescope's `submission_metadata.json`, or a class graded with `--due` whose folders carry nbgrader's
/// `timestamp.txt`:
///
/// ```toml
/// [late]
/// penalty_per_day = 0.1   # a share of the score lost per day, or part of a day, late
/// max_days = 5            # later than that earns nothing
/// ```
#[derive(Debug, Clone, Copy, Deserialize)]
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

    /// What a student handed in `days` late reads (after their points).
    pub fn words(&self, days: u32) -> String {
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
}

/// The course file kept with the exercises.
pub fn default_file() -> PathBuf {
    crate::project_root().join("exercises").join("course.toml")
}

impl CourseFile {
    pub fn load(path: &Path) -> Result<CourseFile> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read the course file {}", path.display()))?;
        let file: File = toml::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{} is not a course file ({}): it may have a [points] table, a `name = points` line for each \
                 exercise whose points differ from its default, and a [late] table (penalty_per_day, max_days)",
                path.display(),
                e.message()
            )
        })?;
        for (name, &p) in &file.points {
            crate::find(name).with_context(|| format!("{} gives points to an unknown exercise", path.display()))?;
            if !(p.is_finite() && p >= 0.0) {
                bail!("{}: the points of {name} must be a number ≥ 0, not {p}", path.display());
            }
        }
        if let Some(late) = file.late {
            if !(0.0..=1.0).contains(&late.penalty_per_day) {
                bail!("{}: [late] penalty_per_day is a share of the score, between 0 and 1", path.display());
            }
        }
        let mut points: BTreeMap<String, f64> = EXERCISES.iter().map(|e| (e.name.to_string(), e.points)).collect();
        points.extend(file.points);
        Ok(CourseFile { points, late: file.late })
    }

    /// The most an exercise can earn.
    pub fn max(&self, name: &str) -> f64 {
        self.points.get(name).copied().unwrap_or(0.0)
    }

    /// What an outcome earns: all of it when passed, a share per passed part for a check of parts.
    pub fn earned(&self, o: &Outcome) -> f64 {
        let max = self.max(o.name);
        match (o.status, o.parts) {
            (Status::Passed, _) => max,
            (Status::Failed, Some((passed, total))) if total > 0 => {
                (max * passed as f64 / total as f64 * 100.0).round() / 100.0
            }
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_begun_late_counts_whole_and_the_policy_keeps_its_share() {
        let parse_time = |t: &str| OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).unwrap();
        let due = parse_time("2026-12-01T23:59:00Z");
        let days = |t: &str| Late::days(parse_time(t), due);
        assert_eq!(days("2026-11-01T00:00:00Z"), 0);
        assert_eq!(days("2026-12-01T23:59:00Z"), 0, "on the minute is on time");
        assert_eq!(days("2026-12-01T23:59:01Z"), 1);
        assert_eq!(days("2026-12-02T23:59:00Z"), 1);
        assert_eq!(days("2026-12-02T23:59:01Z"), 2);
        let policy = Late { penalty_per_day: 0.25, max_days: 3 };
        assert_eq!([0, 1, 3, 4].map(|d| policy.kept(d)), [1.0, 0.75, 0.25, 0.0]);
        assert_eq!(
            policy.words(1),
            "Submitted 1 day late: the course keeps 75 % of the points (a 25 % penalty per day, nothing after 3 days)."
        );
    }
}
