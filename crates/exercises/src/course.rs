//! The course's points: `exercises/course.toml` gives each exercise its weight in a class's grades.
//!
//! ```toml
//! [points]
//! scaled_dot_product = 5
//! cross_attention = 20   # the chapter's homework weighs most
//! ```
//!
//! Every exercise needs a line, so that a new exercise is never silently worth nothing. A check of
//! independent parts (two functions graded apart) gives each part its share of the points.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use super::{Outcome, Status, EXERCISES};

/// Points per exercise, and what lateness costs.
#[derive(Debug, Clone)]
pub struct Course {
    pub points: BTreeMap<String, f64>,
    pub late: Option<Late>,
}

/// A late policy (`[late]` in the course file), applied where the platform gives a due date
/// (Gradescope's `submission_metadata.json`):
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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    points: BTreeMap<String, f64>,
    late: Option<Late>,
}

/// The course file kept with the exercises.
pub fn default_file() -> PathBuf {
    super::grading::project_root().join("exercises").join("course.toml")
}

impl Course {
    pub fn load(path: &Path) -> Result<Course> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read the course file {}", path.display()))?;
        let file: File = toml::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{} is not a course file ({}): it needs a [points] table, one `name = points` line per exercise \
                 (and may have a [late] table: penalty_per_day, max_days)",
                path.display(),
                e.message()
            )
        })?;
        for (name, &p) in &file.points {
            super::find(name).with_context(|| format!("{} gives points to an unknown exercise", path.display()))?;
            if !(p.is_finite() && p >= 0.0) {
                bail!("{}: the points of {name} must be a number ≥ 0, not {p}", path.display());
            }
        }
        if let Some(e) = EXERCISES.iter().find(|e| !file.points.contains_key(e.name)) {
            bail!("{} gives no points to {}: add a line `{} = 5` under [points]", path.display(), e.name, e.name);
        }
        if let Some(late) = file.late {
            if !(0.0..=1.0).contains(&late.penalty_per_day) {
                bail!("{}: [late] penalty_per_day is a share of the score, between 0 and 1", path.display());
            }
        }
        Ok(Course { points: file.points, late: file.late })
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
