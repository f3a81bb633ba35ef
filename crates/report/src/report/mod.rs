//! The class at a glance: after a class is graded, which steps did it get wrong, and how? Each check names
//! the mistake it recognises ([`mistakes`](anatomy_checks::mistakes)); summed over the class, those names are what
//! a lecturer wants before the next lecture. The report does three jobs, one file each: `count.rs` counts
//! them into a [`Summary`] (with the points, the statuses per exercise, the grader's refusals and stops,
//! and the similar pairs when asked); `page.rs` draws the summary as one self-contained HTML page
//! ([`page()`]): inline SVG charts (plotters), each with a title, labelled axes, a legend readable in grey,
//! and the same numbers beside it as a table, no script, nothing from the network; and `reload.rs` reads a
//! graded class back ([`read_lines`], [`remake`]).
//!
//! The report is made from the grade sheet's rows, and those can be read back from the JSON lines of
//! `anatomy exercises grade --json` ([`GradeLine`](crate::sheet::GradeLine)), so `anatomy exercises
//! report` makes the same report again without grading. [`write()`] writes the report's files.
use std::path::Path;

use anyhow::{Context, Result};

use crate::sheet::{Row, Sheet};
use anatomy_course::write_whole;
use anatomy_intake::similarity::Pair;

mod count;
mod page;
mod reload;

pub use count::{Extended, LateCounts, LateHandIn, MistakeCount, Points, Similar, Statuses, Summary};
pub use page::page;
pub use reload::{read_lines, remake, Saved};

/// Writes the report into `dir`: `index.html`, `summary.json` and `feedback/STUDENT.md` for each student
/// (each file whole). Returns the summary.
pub fn write(dir: &Path, sheet: &Sheet, rows: &[Row], similar: Option<&[Pair]>) -> Result<Summary> {
    let summary = Summary::new(sheet, rows, similar);
    let feedback = dir.join("feedback");
    std::fs::create_dir_all(&feedback).with_context(|| format!("cannot create {}", feedback.display()))?;
    for (row, (_, file)) in rows.iter().zip(&summary.feedback) {
        write_whole(&dir.join(file), &sheet.feedback(row))?;
    }
    write_whole(&dir.join("summary.json"), &(serde_json::to_string_pretty(&summary)? + "\n"))?;
    write_whole(&dir.join("index.html"), &page(&summary))?;
    Ok(summary)
}

impl Summary {
    /// The line that says where the report is and what it found first.
    pub fn closing_line(&self, dir: &Path) -> String {
        let first = self.mistakes.first().map(|m| {
            let who = if m.students == 1 { "student" } else { "students" };
            format!("; the most frequent mistake: {} in {} ({} {who})", m.mistake, m.exercise, m.students)
        });
        format!("wrote the class report to {}{}", dir.join("index.html").display(), first.unwrap_or_default())
    }
}

#[cfg(test)]
mod tests;
