//! The report's third job: reading a graded class back from the JSON lines of `anatomy exercises grade
//! --json` ([`GradeLine`]), and making its report again from them, without grading.
use std::path::Path;

use anyhow::{bail, ensure, Context, Result};

use super::{write, Summary};
use anatomy_course::{Exercise, EXERCISES};
use anatomy_grade::points::CourseFile;
use anatomy_grade::sandbox::Tier;

use crate::sheet::{GradeLine, Row, Sheet};

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

/// The largest file of grading lines read: a line per student, of a few kilobytes (a message of at most
/// 4,000 characters for each exercise not passed), so that a class of thousands fits many times over.
pub const MAX_GRADES_FILE: u64 = 64 << 20;
/// The longest line read: every exercise failed with the longest message, escaped, is under 1 MiB, and a
/// line is parsed whole, each of its values built.
pub const MAX_LINE: usize = 1 << 20;
/// The most students read: a roster's most ([`anatomy_intake::roster::MAX_STUDENTS`]).
pub const MAX_LINES: usize = anatomy_intake::roster::MAX_STUDENTS;

/// What to give instead of a file that is not a grading's lines.
const GIVE: &str = "give the output of `cargo anatomy exercises grade --json`";

/// A graded class read back from the JSON lines ([`GradeLine`]) of the file `file`. A line that is not a
/// grading's is refused with the file and its number; each line becomes its row as it is read.
pub fn read_lines(text: &str, file: &Path) -> Result<Saved> {
    let shown = file.display();
    let mut first: Option<(Vec<&'static Exercise>, GradeLine)> = None;
    let mut rows = Vec::new();
    for (i, l) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let n = i + 1;
        ensure!(
            l.len() <= MAX_LINE,
            "{shown} line {n} is over {} MiB, longer than a grading's: {GIVE}",
            MAX_LINE >> 20
        );
        ensure!(rows.len() < MAX_LINES, "{shown} holds over {MAX_LINES} students, more than a class: {GIVE}");
        let line: GradeLine = serde_json::from_str(l).map_err(|e| match e.is_data() {
            true => anyhow::anyhow!("{shown} line {n} is not a grading's: {GIVE}: {e}"),
            false => anyhow::anyhow!("{shown} line {n} is not JSON: {GIVE}: {e}"),
        })?;
        let chosen = match &first {
            Some((chosen, _)) => chosen.clone(),
            None => {
                let chosen: Vec<_> = EXERCISES.iter().filter(|e| line.statuses.contains_key(e.name)).collect();
                ensure!(!chosen.is_empty(), "{shown} line {n} names no exercise: {GIVE}");
                chosen
            }
        };
        for (name, &(passed, total)) in &line.parts {
            ensure!(
                total > 0 && passed <= total,
                "{shown} line {n}: {}'s parts of {name} are {passed} passed of {total}, which no grading gives: {GIVE}",
                line.student
            );
        }
        rows.push(line.row(&chosen).with_context(|| format!("{shown} line {n}"))?);
        if first.is_none() {
            first = Some((chosen, line));
        }
    }
    let Some((chosen, first)) = first else {
        bail!("{shown} holds no graded students: {GIVE}");
    };
    let tier = Tier::named(&first.sandbox_tier);
    let due = first.late.as_ref().and_then(|l| anatomy_intake::times::parse_time(&l.due));
    Ok(Saved { chosen, tier, due, rows })
}

/// Makes the report again from a file of saved JSON lines (`grade --json`), into `out`, with the
/// similarity pairs of `class` (the graded class folder) when given.
pub fn remake(grades: &Path, out: &Path, course: &CourseFile, class: Option<&Path>) -> Result<Summary> {
    let limit = anatomy_intake::files::Limit {
        max: MAX_GRADES_FILE,
        kind: "a file of grading lines",
        fix: "give the JSON lines of `grade --json`",
    };
    let text = anatomy_intake::files::read_text(grades, limit).map_err(anyhow::Error::msg)?;
    let Saved { chosen, tier, due, rows } = read_lines(&text, grades)?;
    ensure!(
        due.is_none() || course.late.is_some(),
        "{} was graded with a due date but the course file has no [late] policy: give the course file it was graded with (--course)",
        grades.display()
    );
    let sheet = Sheet { chosen: &chosen, course, tier: &tier, due };
    let pairs = match class {
        Some(class) => Some(
            crate::similarity::report::compare(
                &anatomy_grade::handin::students(class)?,
                &chosen,
                anatomy_intake::similarity::THRESHOLD,
            )?
            .pairs,
        ),
        None => None,
    };
    write(out, &sheet, &rows, pairs.as_deref())
}

#[cfg(test)]
mod tests {
    use super::super::tests::class;
    use super::*;

    /// The class of the report's tests as `grade --json` writes it, graded with `due` in `tier`.
    fn saved(tier: &Tier, due: Option<time::OffsetDateTime>) -> (Vec<Row>, String) {
        let (chosen, course, rows) = class();
        let sheet = Sheet { chosen: &chosen, course: &course, tier, due };
        let text: String = rows.iter().map(|r| serde_json::to_string(&sheet.json(r)).unwrap() + "\n").collect();
        (rows, text)
    }

    fn refusal(text: &str) -> String {
        format!("{:#}", read_lines(text, Path::new("grades.jsonl")).err().expect("refused"))
    }

    #[test]
    fn saved_lines_read_back_as_the_same_class_blank_lines_aside() {
        let due = anatomy_intake::times::parse_time("2026-03-01T12:00:00Z");
        let (rows, text) = saved(&Tier::Bubblewrap("/usr/bin/bwrap".into()), due);
        let spaced = format!("\n{}\n  \n", text.replace('\n', "\n\n"));
        let back = read_lines(&spaced, Path::new("grades.jsonl")).unwrap();
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
        let back = read_lines(&undated, Path::new("grades.jsonl")).unwrap();
        assert_eq!((back.tier.name(), back.due), ("none", None));
    }

    #[test]
    fn a_line_that_is_not_a_gradings_is_refused_with_the_file_and_its_number() {
        let (_, text) = saved(&Tier::None, None);
        let advice = "give the output of `cargo anatomy exercises grade --json`";
        assert_eq!(refusal(""), format!("grades.jsonl holds no graded students: {advice}"));
        assert_eq!(refusal(" \n\n"), format!("grades.jsonl holds no graded students: {advice}"));
        let broken = format!("{text}\n{{\"student\": ");
        assert!(
            refusal(&broken).starts_with(&format!("grades.jsonl line 6 is not JSON: {advice}: ")),
            "{}",
            refusal(&broken)
        );
        let other = format!("{text}{{\"student\": \"eve\"}}\n");
        assert!(
            refusal(&other).starts_with(&format!("grades.jsonl line 5 is not a grading's: {advice}: ")),
            "{}",
            refusal(&other)
        );
        // A later line without an exercise the first one has: the line's number, then why.
        let first = text.lines().next().unwrap();
        let fewer =
            first.replace("\"causal_mask\":\"passed\",", "").replace("\"student\":\"ada\"", "\"student\":\"zoe\"");
        assert_ne!(fewer, first);
        assert_eq!(
            refusal(&format!("{first}\n{fewer}\n")),
            "grades.jsonl line 2: zoe's line has no status for causal_mask: make the report from the same --only"
        );
        let nothing = first.replace("\"causal_mask\":\"passed\",", "").replace("\"layer_norm\":\"passed\",", "");
        assert_eq!(refusal(&nothing), format!("grades.jsonl line 1 names no exercise: {advice}"));
        // Parts no grading gives would multiply the points: more passed than there are, or none at all.
        for (parts, said) in [("[3,2]", "3 passed of 2"), ("[0,0]", "0 passed of 0")] {
            let forged = first.replacen("\"parts\":{}", &format!("\"parts\":{{\"causal_mask\":{parts}}}"), 1);
            assert_ne!(forged, first, "the line has parts to forge");
            assert_eq!(
                refusal(&forged),
                format!("grades.jsonl line 1: ada's parts of causal_mask are {said}, which no grading gives: {advice}")
            );
        }
        let long = format!("{first}\n{{\"student\": \"{}\"}}\n", "x".repeat(MAX_LINE));
        assert_eq!(refusal(&long), format!("grades.jsonl line 2 is over 1 MiB, longer than a grading's: {advice}"));
        let many = format!("{first}\n").repeat(MAX_LINES + 1);
        assert_eq!(refusal(&many), format!("grades.jsonl holds over 20000 students, more than a class: {advice}"));
    }

    #[test]
    fn a_report_remade_from_dated_grades_needs_the_course_files_late_policy() {
        let dir = crate::test_dir::TestDir::new("report-remake");
        let grades = dir.join("grades.jsonl");
        let (_, course, rows) = class();
        std::fs::write(&grades, saved(&Tier::None, anatomy_intake::times::parse_time("2026-03-01T12:00:00Z")).1)
            .unwrap();
        let refused = remake(&grades, &dir.join("out"), &course, None).err().unwrap().to_string();
        assert_eq!(
            refused,
            format!(
                "{} was graded with a due date but the course file has no [late] policy: give the course file it was \
                 graded with (--course)",
                grades.display()
            )
        );
        assert!(!dir.join("out").exists(), "nothing written");
        let late =
            CourseFile { late: Some(anatomy_grade::points::Late { penalty_per_day: 0.1, max_days: 5 }), ..course };
        let summary = remake(&grades, &dir.join("out"), &late, None).unwrap();
        assert_eq!(summary.students, rows.len());
        assert_eq!(summary.late.as_ref().map(|l| l.unknown.len()), Some(rows.len()), "no hand-in times were kept");
        assert!(dir.join("out/index.html").is_file() && dir.join("out/feedback/ada.md").is_file());
        let missing = remake(&dir.join("none.jsonl"), &dir.join("out"), &late, None).err().unwrap().to_string();
        assert!(missing.starts_with("cannot read ") && missing.ends_with("give the JSON lines of `grade --json`"));
    }

    #[test]
    fn a_file_of_grading_lines_past_its_limit_is_refused_before_it_is_read_and_nothing_is_written() {
        let dir = crate::test_dir::TestDir::new("report-large");
        let grades = dir.join("grades.jsonl");
        // Sparse: 1 GiB that costs no disk.
        std::fs::File::create(&grades).unwrap().set_len(1 << 30).unwrap();
        let (_, course, _) = class();
        let refused = format!("{:#}", remake(&grades, &dir.join("out"), &course, None).err().unwrap());
        assert_eq!(
            refused,
            format!(
                "{} is 1 GiB, more than the 64 MiB a file of grading lines may be: give the JSON lines of `grade --json`",
                grades.display()
            )
        );
        assert!(!dir.join("out").exists(), "nothing written");
    }
}
