//! Gradescope: the autograder zip (`setup.sh`, `run_autograder` and the course without the instructors'
//! files, which Gradescope unpacks into `/autograder/source`) and `results.json` for the submission in
//! `/autograder/submission`, with the course's late policy applied to the due date of
//! `submission_metadata.json`.
use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::{course_files, executable, feedback, grade_folder, graded_in, hand_in_folder, only_args, round, SETUP};
use crate::points::{CourseFile, Late};
use crate::sandbox::Tier;
use crate::{Exercise, Outcome, Status};

/// The results of a grading that could not run: one visible failed test that says why.
pub fn failure(why: &str, chosen: &[&'static Exercise]) -> Value {
    let max: f64 = chosen.len() as f64;
    json!({
        "score": 0.0,
        "output": format!("The grader could not grade this submission; your instructor has been told what happened:\n\n~~~~text\n{why}\n~~~~\n"),
        "output_format": "md",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [{
            "name": "The grader itself",
            "score": 0.0,
            "max_score": max.max(1.0),
            "status": "failed",
            "output": format!("~~~~text\n{why}\n~~~~\n"),
            "output_format": "md",
            "visibility": "visible",
        }],
    })
}

/// `results.json` for the submission in `root/submission`: one test per exercise with its points (partial
/// credit, less the late penalty) and the feedback.
pub fn results(root: &Path, chosen: &[&'static Exercise], course: Result<CourseFile>) -> Result<Value> {
    let course = course?;
    let (outcomes, tier) = grade_folder(&hand_in_folder(root, "submission", "Gradescope")?, chosen)?;
    let late = lateness(root, &course)?;
    Ok(results_of(&outcomes, &tier, chosen, &course, late))
}

/// Gradescope's `results.json` for a grading's outcomes (one per chosen exercise, in order), graded in
/// `tier`, `late` days late under the course's policy.
pub fn results_of(
    outcomes: &[Outcome],
    tier: &Tier,
    chosen: &[&'static Exercise],
    course: &CourseFile,
    late: Option<(u32, Late)>,
) -> Value {
    let kept = late.map(|(days, policy)| policy.kept(days)).unwrap_or(1.0);
    let mut tests = Vec::new();
    let (mut earned, mut max) = (0.0, 0.0);
    for (e, o) in chosen.iter().zip(outcomes) {
        let points = course.earned(o) * kept;
        earned += points;
        max += course.max(e.name);
        tests.push(json!({
            "name": format!("{}. {}{}", e.number(), e.name, if e.homework { " (the chapter's homework)" } else { "" }),
            "number": e.number().to_string(),
            "score": round(points),
            "max_score": course.max(e.name),
            "status": if o.status == Status::Passed { "passed" } else { "failed" },
            "output": feedback(o),
            "output_format": "md",
            "visibility": "visible",
            "tags": [e.chapter],
        }));
    }
    let passed = outcomes.iter().filter(|o| o.status == Status::Passed).count();
    let mut output = format!(
        "{passed} of {} exercises passed: {} of {} points. {}",
        outcomes.len(),
        round(earned),
        max,
        graded_in(tier)
    );
    if let Some((days, policy)) = late.filter(|(days, _)| *days > 0) {
        output += &format!("\n\n{}", policy.words(days));
    }
    json!({
        "score": round(earned),
        "output": output,
        "output_format": "md",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    })
}

/// How many days (rounded up) after the due date the submission came, with the course's policy; `None`
/// without a policy or without the dates.
fn lateness(root: &Path, course: &CourseFile) -> Result<Option<(u32, Late)>> {
    let Some(policy) = course.late else { return Ok(None) };
    let path = root.join("submission_metadata.json");
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(None) };
    let meta: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let date = |v: &Value| -> Result<Option<time::OffsetDateTime>> {
        match v.as_str() {
            None => Ok(None),
            Some(s) => anatomy_intake::times::parse_time(s)
                .map(Some)
                .with_context(|| format!("{}: {s:?} is not a date", path.display())),
        }
    };
    let (Some(created), Some(due)) = (date(&meta["created_at"])?, date(&meta["assignment"]["due_date"])?) else {
        return Ok(None);
    };
    Ok(Some((Late::days(created, due), policy)))
}

/// Writes the autograder zip `out`; returns what to tell the instructor.
pub fn write_zip(out: &Path, only: &[String], course: &Path) -> Result<String> {
    if out.extension().is_none_or(|x| x != "zip") {
        bail!("{}: name the autograder file OUT.zip (Gradescope asks for a zip)", out.display());
    }
    if let Some(folder) = out.parent().filter(|f| !f.as_os_str().is_empty()) {
        if !folder.is_dir() {
            bail!("the folder {} does not exist", folder.display());
        }
    }
    let (root, files, course_text) = course_files(course)?;
    let only_args = only_args(only);
    let partial = out.with_extension("zip.partial");
    let file = std::fs::File::create(&partial).with_context(|| format!("cannot write {}", partial.display()))?;
    let mut zip = zip::ZipWriter::new(file);
    let plain = zip::write::FileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let program = plain.unix_permissions(0o755);
    zip.start_file("setup.sh", program)?;
    zip.write_all(SETUP.as_bytes())?;
    zip.start_file("run_autograder", program)?;
    zip.write_all(
        format!("#!/usr/bin/env bash\nexec anatomy exercises autograder run --root /autograder{only_args}\n")
            .as_bytes(),
    )?;
    for f in &files {
        let full = root.join(f);
        zip.start_file(format!("course/{}", f.display()), if executable(&full) { program } else { plain })?;
        if f == Path::new("exercises/course.toml") {
            zip.write_all(course_text.as_bytes())?;
        } else {
            zip.write_all(&std::fs::read(&full).with_context(|| format!("cannot read {}", full.display()))?)?;
        }
    }
    zip.finish()?;
    std::fs::rename(&partial, out).with_context(|| format!("cannot write {}", out.display()))?;
    Ok(format!(
        "wrote {} ({} files of the course, setup.sh, run_autograder): upload it as the assignment's autograder",
        out.display(),
        files.len()
    ))
}
