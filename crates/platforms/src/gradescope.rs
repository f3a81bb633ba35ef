//! Gradescope: the autograder zip (`setup.sh`, `run_autograder` and the course without the instructors'
//! files, which Gradescope unpacks into `/autograder/source`) and `results.json` for the submission in
//! `/autograder/submission`, with the course's late policy applied to the due date of
//! `submission_metadata.json` ([`metadata`]).
pub mod metadata;

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::{course_files, executable, feedback, grade_folder, graded_in, hand_in_folder, only_args, SETUP};
use anatomy_course::{Exercise, Outcome, Status};
use anatomy_grade::points::{self, CourseFile, Late};
use anatomy_grade::sandbox::Tier;

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
    let late = metadata::lateness(root, &course)?;
    let mut results = results_of(&outcomes, &tier, chosen, &course, late.counted());
    if let Some(note) = late.note() {
        results["output"] = format!("{}\n\n{note}", results["output"].as_str().unwrap_or_default()).into();
    }
    Ok(results)
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
    let mut tests = Vec::new();
    let mut cells = Vec::new();
    for (e, o) in chosen.iter().zip(outcomes) {
        let cell = points::score(course.max(e.name), o.status, o.parts, late);
        cells.push(cell);
        tests.push(json!({
            "name": format!("{}. {}{}", e.number(), e.name, if e.homework { " (the chapter's homework)" } else { "" }),
            "number": e.number().to_string(),
            "score": cell.points,
            "max_score": cell.max,
            "status": if o.status == Status::Passed { "passed" } else { "failed" },
            "output": feedback(o),
            "output_format": "md",
            "visibility": "visible",
            "tags": [e.chapter],
        }));
    }
    let earned = points::total(cells.iter().map(|c| c.points));
    let max = cells.iter().fold(0.0, |sum, c| sum + c.max);
    let passed = outcomes.iter().filter(|o| o.status == Status::Passed).count();
    let mut output =
        format!("{passed} of {} exercises passed: {earned} of {max} points. {}", outcomes.len(), graded_in(tier));
    if let Some((days, policy)) = late.filter(|(days, _)| *days > 0) {
        output += &format!("\n\n{}", policy.words(days));
    }
    json!({
        "score": earned,
        "output": output,
        "output_format": "md",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    })
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
    // A new, exclusive file beside `out`, renamed over it once whole (never through a link planted there).
    let mut partial = anatomy_course::Partial::create(out)?;
    let mut zip = zip::ZipWriter::new(partial.file());
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
    drop(zip);
    partial.finish()?;
    Ok(format!(
        "wrote {} ({} files of the course, setup.sh, run_autograder): upload it as the assignment's autograder",
        out.display(),
        files.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use anatomy_course::EXERCISES;

    /// Three exercises at their default points (5, 20, 5): layer_norm passed, cross_attention failed, and
    /// split_heads with one of its two parts.
    fn graded() -> (Vec<&'static Exercise>, CourseFile, Vec<Outcome>) {
        let names = ["layer_norm", "cross_attention", "split_heads"];
        let chosen: Vec<&'static Exercise> =
            names.iter().map(|n| EXERCISES.iter().find(|e| e.name == *n).unwrap()).collect();
        let course = CourseFile {
            points: chosen.iter().map(|e| (e.name.to_string(), e.points)).collect(),
            late: None,
            assignments: vec![],
        };
        let statuses = [(Status::Passed, None), (Status::Failed, None), (Status::Failed, Some((1, 2)))];
        let outcomes = chosen
            .iter()
            .zip(statuses)
            .map(|(e, (status, parts))| Outcome {
                name: e.name,
                label: e.name.into(),
                status,
                message: "why".into(),
                parts,
                mistake: None,
                output: None,
            })
            .collect();
        (chosen, course, outcomes)
    }

    #[test]
    fn each_exercise_is_a_test_with_its_number_points_status_and_chapter() {
        let (chosen, course, outcomes) = graded();
        let r = results_of(&outcomes, &Tier::None, &chosen, &course, None);
        let tests = r["tests"].as_array().unwrap();
        let seen: Vec<_> = tests
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap(),
                    t["number"].as_str().unwrap(),
                    t["score"].as_f64().unwrap(),
                    t["max_score"].as_f64().unwrap(),
                    t["status"].as_str().unwrap(),
                )
            })
            .collect();
        // Each test is numbered as its exercise (its place in the declaration).
        let n: Vec<String> = chosen.iter().map(|e| e.number().to_string()).collect();
        assert_eq!(
            seen,
            [
                (&*format!("{}. layer_norm", n[0]), &*n[0], 5.0, 5.0, "passed"),
                (&*format!("{}. cross_attention (the chapter's homework)", n[1]), &*n[1], 0.0, 20.0, "failed"),
                (&*format!("{}. split_heads", n[2]), &*n[2], 2.5, 5.0, "failed")
            ]
        );
        assert_eq!(tests[1]["tags"], json!(["08-decoder-and-masking"]));
        assert_eq!(tests[0]["output"], "**passed**");
        assert!(tests.iter().all(|t| t["output_format"] == "md" && t["visibility"] == "visible"));
        assert_eq!(r["score"], 7.5);
        assert_eq!(
            r["output"],
            "1 of 3 exercises passed: 7.5 of 30 points. Graded with no sandbox (--no-sandbox: the students' code ran \
             with the grader's rights)."
        );
        assert_eq!((r["visibility"].as_str(), r["stdout_visibility"].as_str()), (Some("visible"), Some("hidden")));
    }

    #[test]
    fn a_late_submission_keeps_its_share_of_every_test_and_says_so_and_on_time_says_nothing() {
        let (chosen, course, outcomes) = graded();
        let policy = Late { penalty_per_day: 0.1, max_days: 5 };
        let r = results_of(&outcomes, &Tier::None, &chosen, &course, Some((1, policy)));
        assert_eq!(r["score"], 6.75, "0.9 × 7.5");
        let scores: Vec<f64> = r["tests"].as_array().unwrap().iter().map(|t| t["score"].as_f64().unwrap()).collect();
        assert_eq!(scores, [4.5, 0.0, 2.25]);
        let output = r["output"].as_str().unwrap();
        assert!(output.starts_with("1 of 3 exercises passed: 6.75 of 30 points. "), "{output}");
        assert!(
            output.ends_with(
                "\n\nSubmitted 1 day late: the course keeps 90 % of the points (a 10 % penalty per day, nothing after \
                 5 days)."
            ),
            "{output}"
        );
        let on_time = results_of(&outcomes, &Tier::None, &chosen, &course, Some((0, policy)));
        assert_eq!(on_time["score"], 7.5);
        assert!(!on_time["output"].as_str().unwrap().contains("Submitted"), "{on_time}");
        let too_late = results_of(&outcomes, &Tier::None, &chosen, &course, Some((6, policy)));
        assert_eq!(too_late["score"], 0.0);
    }

    #[test]
    fn a_grading_that_could_not_run_is_one_failed_visible_test_saying_why() {
        let (chosen, _, _) = graded();
        let r = failure("the disk is full", &chosen);
        assert_eq!(r["score"], 0.0);
        assert_eq!(
            r["output"],
            "The grader could not grade this submission; your instructor has been told what happened:\n\n~~~~text\nthe \
             disk is full\n~~~~\n"
        );
        let tests = r["tests"].as_array().unwrap();
        assert_eq!(tests.len(), 1);
        assert_eq!(
            (tests[0]["name"].as_str(), tests[0]["status"].as_str()),
            (Some("The grader itself"), Some("failed"))
        );
        assert_eq!((tests[0]["score"].as_f64(), tests[0]["max_score"].as_f64()), (Some(0.0), Some(3.0)));
        assert_eq!(tests[0]["output"], "~~~~text\nthe disk is full\n~~~~\n");
        assert_eq!(failure("x", &[])["tests"][0]["max_score"], 1.0, "never out of nothing");
    }

    #[test]
    fn the_zip_must_be_named_zip_in_a_folder_that_exists() {
        let course = Path::new("exercises/course.toml");
        let error = write_zip(Path::new("grader.tar"), &[], course).unwrap_err().to_string();
        assert_eq!(error, "grader.tar: name the autograder file OUT.zip (Gradescope asks for a zip)");
        let error = write_zip(Path::new("grader"), &[], course).unwrap_err().to_string();
        assert!(error.starts_with("grader: name the autograder file OUT.zip"), "{error}");
        let error = write_zip(Path::new("/no/such/folder/grader.zip"), &[], course).unwrap_err().to_string();
        assert_eq!(error, "the folder /no/such/folder does not exist");
    }
}
