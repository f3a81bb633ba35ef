//! GitHub Classroom: the grading step of a template repository's workflow, whose result the
//! `autograding-grading-reporter` action reads.
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use serde_json::json;

use super::grade_folder;
use anatomy_course::{Exercise, Outcome, Status};
use anatomy_grade::points::{self, CourseFile, Late};
use anatomy_grade::sandbox::Tier;

/// What the step gives: the reporter's base64 JSON, whether every exercise passed, and a line for people.
pub struct ClassroomReport {
    pub encoded: String,
    pub all_passed: bool,
    pub summary: String,
}

/// Grades the student's own repository (its `exercises/` folder) as GitHub Classroom's workflow step, and
/// gives the result the way `autograding-grading-reporter` reads it: a base64 JSON `{"version": 1,
/// "status", "max_score", "tests": [...]}` as the step's output `result` (appended to the file
/// `github_output` names, `$GITHUB_OUTPUT` in a workflow), with points per exercise — partial credit,
/// which the command grader's all-or-nothing steps cannot give.
pub fn report(
    folder: &Path,
    chosen: &[&'static Exercise],
    course: &CourseFile,
    github_output: Option<&Path>,
) -> Result<ClassroomReport> {
    let started = Instant::now();
    let (outcomes, tier) = grade_folder(folder, chosen)?;
    let report = report_of(&outcomes, &tier, chosen, course, started.elapsed().as_millis() as u64)?;
    if let Some(path) = github_output {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot write the step's output to {}", path.display()))?;
        writeln!(file, "result={}", report.encoded)?;
    }
    Ok(report)
}

/// The step's result from a grading's outcomes (`millis`: how long it took, shared out over the
/// exercises): a test per exercise named "N. name", "pass", "error" (does not compile) or "fail", with its
/// points and the status's words and message. A repository's hand-in has no due date: none is late.
pub(crate) fn report_of(
    outcomes: &[Outcome],
    tier: &Tier,
    chosen: &[&'static Exercise],
    course: &CourseFile,
    millis: u64,
) -> Result<ClassroomReport> {
    report_late(outcomes, tier, chosen, course, millis, None)
}

/// [`report_of`] for a grading handed in `late` days late under the course's policy, each exercise scored
/// as the grade sheet scores it ([`points::score`]).
pub(crate) fn report_late(
    outcomes: &[Outcome],
    tier: &Tier,
    chosen: &[&'static Exercise],
    course: &CourseFile,
    millis: u64,
    late: Option<(u32, Late)>,
) -> Result<ClassroomReport> {
    let (mut cells, mut tests) = (Vec::new(), Vec::new());
    for (e, o) in chosen.iter().zip(outcomes) {
        let cell = points::score(course.max(e.name), o.status, o.parts, late);
        cells.push(cell);
        let status = match o.status {
            Status::Passed => "pass",
            Status::DoesNotCompile => "error",
            _ => "fail",
        };
        tests.push(json!({
            "name": format!("{}. {}", e.number(), e.name),
            "status": status,
            "score": cell.points,
            "message": format!("{}: {}", o.status.words(), o.message),
            "test_code": format!("cargo anatomy exercises check {}", e.name),
            "filename": format!("exercises/{}.rs", e.name),
            "line_no": 0,
            "duration": millis / chosen.len().max(1) as u64,
        }));
    }
    let max: f64 = chosen.iter().map(|e| course.max(e.name)).sum();
    let all = outcomes.iter().all(|o| o.status == Status::Passed);
    let result = json!({"version": 1, "status": if all { "pass" } else { "fail" }, "max_score": max, "tests": tests});
    let encoded = base64::encode(serde_json::to_string(&result)?);
    let summary = format!(
        "{} of {} exercises passed: {} of {max} points (graded in the {} sandbox)",
        outcomes.iter().filter(|o| o.status == Status::Passed).count(),
        outcomes.len(),
        points::total(cells.iter().map(|c| c.points)),
        tier.name()
    );
    Ok(ClassroomReport { encoded, all_passed: all, summary })
}
