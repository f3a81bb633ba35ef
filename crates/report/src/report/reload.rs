//! The report's third job: reading a graded class back from the JSON lines of `anatomy exercises grade
//! --json` ([`GradeLine`]), and making its report again from them, without grading.
use std::path::Path;

use anyhow::{bail, ensure, Context, Result};

use super::{write, Summary};
use crate::points::CourseFile;
use crate::sandbox::Tier;
use crate::sheet::{GradeLine, Row, Sheet};
use crate::{Exercise, EXERCISES};

/// A graded class as the JSON lines of `anatomy exercises grade --json` keep it.
pub struct Saved {
    /// The exercises graded: those the first line names, in course order.
    pub chosen: Vec<&'static Exercise>,
    /// The sandbox's tier, by name (all a line keeps).
    pub tier: Tier,
    /// The due date, when the class was graded with one.
    pub due: Option<time::OffsetDateTime>,
    pub rows: Vec<Row>,
}

/// A graded class read back from its JSON lines ([`GradeLine`]). A line that is not a grading's is refused
/// with its number.
pub fn read_lines(text: &str) -> Result<Saved> {
    let mut lines: Vec<(usize, GradeLine)> = Vec::new();
    for (i, l) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let value: serde_json::Value = serde_json::from_str(l).with_context(|| {
            format!("line {} is not JSON: give the output of `anatomy exercises grade --json`", i + 1)
        })?;
        let line = serde_json::from_value(value).with_context(|| {
            format!("line {} is not a grading's: give the output of `anatomy exercises grade --json`", i + 1)
        })?;
        lines.push((i + 1, line));
    }
    let Some((_, first)) = lines.first() else {
        bail!("no graded students in it: give the output of `anatomy exercises grade --json`");
    };
    let chosen: Vec<&'static Exercise> = EXERCISES.iter().filter(|e| first.statuses.contains_key(e.name)).collect();
    ensure!(!chosen.is_empty(), "line 1 names no exercise: give the output of `anatomy exercises grade --json`");
    let tier = Tier::named(&first.sandbox_tier);
    let due = first.late.as_ref().and_then(|l| anatomy_intake::times::parse_time(&l.due));
    let rows =
        lines.iter().map(|(n, line)| line.row(&chosen).with_context(|| format!("line {n}"))).collect::<Result<_>>()?;
    Ok(Saved { chosen, tier, due, rows })
}

/// Makes the report again from a file of saved JSON lines (`grade --json`), into `out`, with the
/// similarity pairs of `class` (the graded class folder) when given.
pub fn remake(grades: &Path, out: &Path, course: &CourseFile, class: Option<&Path>) -> Result<Summary> {
    let text = std::fs::read_to_string(grades)
        .with_context(|| format!("cannot read {}: give the JSON lines of `grade --json`", grades.display()))?;
    let Saved { chosen, tier, due, rows } = read_lines(&text)?;
    ensure!(
        due.is_none() || course.late.is_some(),
        "the grades were given a due date but the course file has no [late] policy: give the course file they were graded with (--course)"
    );
    let book = Sheet { chosen: &chosen, course, tier: &tier, due };
    let pairs = match class {
        Some(class) => Some(
            crate::similarity::report::compare(
                &crate::handin::students(class)?,
                &chosen,
                crate::similarity::THRESHOLD,
            )?
            .pairs,
        ),
        None => None,
    };
    write(out, &book, &rows, pairs.as_deref())
}
