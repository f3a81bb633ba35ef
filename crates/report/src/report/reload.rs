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
            format!("line {} is not JSON: give the output of `cargo anatomy exercises grade --json`", i + 1)
        })?;
        let line = serde_json::from_value(value).with_context(|| {
            format!("line {} is not a grading's: give the output of `cargo anatomy exercises grade --json`", i + 1)
        })?;
        lines.push((i + 1, line));
    }
    let Some((_, first)) = lines.first() else {
        bail!("no graded students in it: give the output of `cargo anatomy exercises grade --json`");
    };
    let chosen: Vec<&'static Exercise> = EXERCISES.iter().filter(|e| first.statuses.contains_key(e.name)).collect();
    ensure!(!chosen.is_empty(), "line 1 names no exercise: give the output of `cargo anatomy exercises grade --json`");
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

#[cfg(test)]
mod tests {
    use super::super::tests::class;
    use super::*;

    /// The class of the report's tests as `grade --json` writes it, graded with `due` in `tier`.
    fn saved(tier: &Tier, due: Option<time::OffsetDateTime>) -> (Vec<Row>, String) {
        let (chosen, course, rows) = class();
        let book = Sheet { chosen: &chosen, course: &course, tier, due };
        let text: String = rows.iter().map(|r| serde_json::to_string(&book.json(r)).unwrap() + "\n").collect();
        (rows, text)
    }

    fn refusal(text: &str) -> String {
        format!("{:#}", read_lines(text).err().expect("refused"))
    }

    #[test]
    fn saved_lines_read_back_as_the_same_class_blank_lines_aside() {
        let due = anatomy_intake::times::parse_time("2026-03-01T12:00:00Z");
        let (rows, text) = saved(&Tier::Bubblewrap("/usr/bin/bwrap".into()), due);
        let spaced = format!("\n{}\n  \n", text.replace('\n', "\n\n"));
        let back = read_lines(&spaced).unwrap();
        let chosen: Vec<&str> = back.chosen.iter().map(|e| e.name).collect();
        assert_eq!(chosen, ["layer_norm", "causal_mask"], "course order, not the keys' order");
        assert_eq!((back.tier.name(), back.due), ("bubblewrap", due));
        assert_eq!(back.rows.len(), rows.len());
        for (read, row) in back.rows.iter().zip(&rows) {
            assert_eq!(read.student, row.student);
            let statuses = |r: &Row| r.outcomes.iter().map(|o| (o.status, o.mistake.clone())).collect::<Vec<_>>();
            assert_eq!(statuses(read), statuses(row), "{}", row.student);
        }
        let (_, undated) = saved(&Tier::None, None);
        let back = read_lines(&undated).unwrap();
        assert_eq!((back.tier.name(), back.due), ("none", None));
    }

    #[test]
    fn a_line_that_is_not_a_gradings_is_refused_with_its_number() {
        let (_, text) = saved(&Tier::None, None);
        let advice = "give the output of `cargo anatomy exercises grade --json`";
        assert_eq!(refusal(""), format!("no graded students in it: {advice}"));
        assert_eq!(refusal(" \n\n"), format!("no graded students in it: {advice}"));
        let broken = format!("{text}\n{{\"student\": ");
        assert!(refusal(&broken).starts_with(&format!("line 6 is not JSON: {advice}: ")), "{}", refusal(&broken));
        let other = format!("{text}{{\"student\": \"eve\"}}\n");
        assert!(refusal(&other).starts_with(&format!("line 5 is not a grading's: {advice}: ")), "{}", refusal(&other));
        // A later line without an exercise the first one has: the line's number, then why.
        let first = text.lines().next().unwrap();
        let fewer =
            first.replace("\"causal_mask\":\"passed\",", "").replace("\"student\":\"ada\"", "\"student\":\"zoe\"");
        assert_ne!(fewer, first);
        assert_eq!(
            refusal(&format!("{first}\n{fewer}\n")),
            "line 2: zoe's line has no status for causal_mask: make the report from the same --only"
        );
        let nothing = first.replace("\"causal_mask\":\"passed\",", "").replace("\"layer_norm\":\"passed\",", "");
        assert_eq!(refusal(&nothing), format!("line 1 names no exercise: {advice}"));
    }

    #[test]
    fn a_report_remade_from_dated_grades_needs_the_course_files_late_policy() {
        let dir = std::env::temp_dir().join(format!("anatomy-report-remake-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let grades = dir.join("grades.jsonl");
        let (_, course, rows) = class();
        std::fs::write(&grades, saved(&Tier::None, anatomy_intake::times::parse_time("2026-03-01T12:00:00Z")).1)
            .unwrap();
        let refused = remake(&grades, &dir.join("out"), &course, None).err().unwrap().to_string();
        assert!(refused.starts_with("the grades were given a due date but the course file has no [late] policy"));
        assert!(!dir.join("out").exists(), "nothing written");
        let late = CourseFile { late: Some(crate::points::Late { penalty_per_day: 0.1, max_days: 5 }), ..course };
        let summary = remake(&grades, &dir.join("out"), &late, None).unwrap();
        assert_eq!(summary.students, rows.len());
        assert_eq!(summary.late.as_ref().map(|l| l.unknown.len()), Some(rows.len()), "no hand-in times were kept");
        assert!(dir.join("out/index.html").is_file() && dir.join("out/feedback/ada.md").is_file());
        let missing = remake(&dir.join("none.jsonl"), &dir.join("out"), &late, None).err().unwrap().to_string();
        assert!(missing.starts_with("cannot read ") && missing.ends_with("give the JSON lines of `grade --json`"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
