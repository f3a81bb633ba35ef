//! The class report and the similarity page, made again from the gradebook alone: the rows are the
//! students' latest graded cells of an assignment, and the files compared are the bytes those runs graded,
//! kept in the gradebook — no class folder is read. The report shows what the grader found; what the
//! instructor decided (a late penalty, an override) shows in the exports and the history, and each
//! student's feedback ends with it, so that they read the grade the platform will hold.
use std::path::Path;

use anyhow::{bail, Result};
use rusqlite::OptionalExtension;

use anatomy_course::write_whole;
use anatomy_grade::points::{Assignment, CourseFile};
use anatomy_grade::sandbox::Tier;
use anatomy_intake::similarity::THRESHOLD;
use anatomy_report::report::{self, Summary};
use anatomy_report::sheet::{points, Row, Sheet};
use anatomy_report::similarity::report::{compare_texts, Text};

use crate::Gradebook;

impl Gradebook {
    /// Writes the class report of an assignment into `out` (as `grade --report` does), and with
    /// `similarity` its pairs and `out/similarity.html`, the two files of each pair side by side.
    pub fn pages(&self, course: &CourseFile, assignment: &Assignment, out: &Path, similarity: bool) -> Result<Summary> {
        let latest: Option<(String, Option<String>)> = self
            .conn()
            .query_row(
                "SELECT tier, due FROM runs WHERE assignment = ?1 ORDER BY id DESC LIMIT 1",
                [&assignment.name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((tier, due)) = latest else {
            bail!(
                "nobody has been graded in {} yet: grade the class first (cargo anatomy exercises grade --assignment {})",
                assignment.name,
                assignment.name
            );
        };
        // The hand-in times as the runs recorded them, each student held to their own due date as it stands
        // (an extension given since counts), as `show` and the exports count them.
        let standings = self.standings(course, assignment)?;
        let rows: Vec<Row> = standings.iter().filter_map(|s| s.row(due.as_deref())).collect();
        let tier = Tier::named(&tier);
        let due = due.as_deref().and_then(anatomy_intake::times::parse_time);
        let sheet = Sheet { chosen: &assignment.exercises, course, tier: &tier, due };
        let pairs = match similarity {
            false => None,
            true => {
                let mut texts = Vec::new();
                for (i, &e) in assignment.exercises.iter().enumerate() {
                    let mut files = Vec::new();
                    for s in &standings {
                        let Some(sha) = s.cells[i].graded.as_ref().and_then(|g| g.source.clone()) else { continue };
                        let text = String::from_utf8_lossy(&self.source(&sha)?).into_owned();
                        files.push(Text {
                            student: s.student.label.clone(),
                            text,
                            shown: format!("{}/{}", s.student.label, e.name),
                        });
                    }
                    texts.push((e, files));
                }
                let compared = compare_texts(texts, rows.len(), THRESHOLD, Vec::new())?;
                std::fs::create_dir_all(out)?;
                write_whole(
                    &out.join("similarity.html"),
                    &compared.html(&format!("{} (from the gradebook)", assignment.name)),
                )?;
                Some(compared.pairs)
            }
        };
        let summary = report::write(out, &sheet, &rows, pairs.as_deref())?;
        for (student, file) in &summary.feedback {
            let Some(s) = standings.iter().find(|s| &s.student.label == student) else { continue };
            if let Some(decided) = decided(course, assignment, s) {
                let path = out.join(file);
                let text = std::fs::read_to_string(&path)?;
                write_whole(&path, &format!("{text}{decided}"))?;
            }
        }
        Ok(summary)
    }
}

/// What the instructor decided of a student's assignment, as the student reads it at the end of their
/// feedback: a late penalty's words, the cells set by hand, and the points that stand. `None` when the
/// instructor decided nothing.
pub(crate) fn decided(course: &CourseFile, assignment: &Assignment, s: &crate::history::Standing) -> Option<String> {
    let mut said = Vec::new();
    if let (Some((_, Some(days))), Some(policy)) = (&s.penalty, course.late) {
        said.push(policy.words(*days));
    }
    for c in s.cells.iter().filter(|c| c.overridden.is_some()) {
        let set = c.points().map(points).unwrap_or_default();
        said.push(format!(
            "The points of `{}` were set to {set} of {}.",
            c.exercise.name,
            points(course.max(c.exercise.name))
        ));
    }
    if said.is_empty() {
        return None;
    }
    let total = points(s.total().unwrap_or_default());
    said.push(format!("Your points for {}: {total} of {}.", assignment.name, points(course.most(assignment))));
    Some(format!("\n## Decided by the instructor\n\n{}\n", said.join("\n\n")))
}
