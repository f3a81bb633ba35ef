//! `anatomy exercises similarity` as a whole: the flags' choices in ([`SimilarityOptions`]), what the command
//! prints out ([`Compared`]). The command line parses and prints.
use std::path::PathBuf;

use anyhow::Result;

use anatomy_course::write_whole;
use anatomy_grade::handin::students;
use anatomy_report::similarity;

use crate::chosen;

/// Which hand-ins of a class to compare, as `anatomy exercises similarity`'s flags say it.
pub struct SimilarityOptions {
    pub submissions: PathBuf,
    /// Only these exercises (none: all).
    pub only: Vec<String>,
    /// Where to write the page of each pair's two files side by side.
    pub html: Option<PathBuf>,
    /// One JSON line per pair instead of Markdown.
    pub json: bool,
    /// The least score a pair is reported with.
    pub threshold: f64,
}

/// What comparing a class prints: the pairs (standard output), then each exercise not compared and the
/// closing line (standard error).
pub struct Compared {
    pub pairs: String,
    pub skipped: Vec<String>,
    pub closing_line: String,
}

/// Compares the hand-ins `options` choose, writing the page they ask for.
pub fn compare(options: &SimilarityOptions) -> Result<Compared> {
    let (chosen, students) = (chosen(&options.only)?, students(&options.submissions)?);
    let report = similarity::report::compare(&students, &chosen, options.threshold)?;
    if let Some(path) = &options.html {
        write_whole(path, &report.html(&options.submissions.display().to_string()))?;
    }
    let pairs = if options.json { report.json_lines()? } else { report.markdown() };
    let closing_line = report.closing_line(chosen.len(), options.threshold);
    Ok(Compared { pairs, skipped: report.skipped, closing_line })
}
