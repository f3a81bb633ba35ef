//! PrairieLearn: its external grader as two folders (`image/`, a Dockerfile that runs the same `setup.sh`
//! on the course, and `question/`, `info.json` naming the image and the entry point and `question.html`
//! with a file upload), and `results.json` for the submission in `/grade/student`.
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::{course_files, grade_folder, graded_in, hand_in_folder, only_args, SETUP};
use anatomy_course::{Exercise, Outcome, Status};
use anatomy_grade::points::{self, CourseFile, Late};
use anatomy_grade::sandbox::Tier;

/// PrairieLearn's `results.json` for the submission in `root/student`: the score as a share (0–1), and
/// per exercise `points` of `max_points` with the feedback as its message (what
/// `<pl-external-grader-results>` shows).
pub fn results(root: &Path, chosen: &[&'static Exercise], course: Result<CourseFile>) -> Result<Value> {
    let course = course?;
    let (outcomes, tier) = grade_folder(&hand_in_folder(root, "student", "PrairieLearn")?, chosen)?;
    Ok(results_of(&outcomes, &tier, chosen, &course))
}

/// PrairieLearn's `results.json` for a grading's outcomes (one per chosen exercise, in order), graded in
/// `tier` (PrairieLearn counts lateness itself: none here).
pub fn results_of(outcomes: &[Outcome], tier: &Tier, chosen: &[&'static Exercise], course: &CourseFile) -> Value {
    results_late(outcomes, tier, chosen, course, None)
}

/// [`results_of`] for a grading handed in `late` days late under the course's policy, each exercise
/// scored as the grade sheet scores it ([`points::score`]).
pub fn results_late(
    outcomes: &[Outcome],
    tier: &Tier,
    chosen: &[&'static Exercise],
    course: &CourseFile,
    late: Option<(u32, Late)>,
) -> Value {
    let (mut cells, mut tests) = (Vec::new(), Vec::new());
    for (e, o) in chosen.iter().zip(outcomes) {
        let cell = points::score(course.max(e.name), o.status, o.parts, late);
        cells.push(cell);
        let message = match o.status {
            Status::Passed => "passed".to_string(),
            _ => {
                let hint = e.hint_levels().into_iter().next().map(|h| format!("\n\nHint: {h}")).unwrap_or_default();
                format!("{}: {}{hint}", o.status.words(), o.message)
            }
        };
        tests.push(json!({
            "name": format!("{}. {}{}", e.number(), e.name, if e.homework { " (the chapter's homework)" } else { "" }),
            "description": e.summary,
            "points": cell.points,
            "max_points": cell.max,
            "message": message,
        }));
    }
    let earned = cells.iter().fold(0.0, |sum, c| sum + c.points);
    let max = cells.iter().fold(0.0, |sum, c| sum + c.max);
    let passed = outcomes.iter().filter(|o| o.status == Status::Passed).count();
    json!({
        "gradable": true,
        "score": if max > 0.0 { earned / max } else { 0.0 },
        "message": format!(
            "{passed} of {} exercises passed: {} of {max} points. {}",
            outcomes.len(),
            points::total(cells.iter().map(|c| c.points)),
            graded_in(tier)
        ),
        "tests": tests,
    })
}

/// PrairieLearn's external grader, as two folders to copy into place —
/// `image/` (build it and push it to Docker Hub as NAME) and `question/` (a question of the course).
/// Nothing is written when OUT exists; a failure leaves no half-written folder. Returns what to tell the
/// instructor.
pub fn write_folders(
    out: &Path,
    image: &str,
    only: &[String],
    chosen: &[&'static Exercise],
    course: &Path,
) -> Result<String> {
    if out.symlink_metadata().is_ok() {
        bail!("{} already exists: name a new folder, so that nothing of yours is overwritten", out.display());
    }
    if image.is_empty() || image.contains(char::is_whitespace) {
        bail!("--image {image:?}: give the Docker Hub name you will push the image as, e.g. me/anatomy-grader");
    }
    let (root, files, course_text) = course_files(course)?;
    let partial = PathBuf::from(format!("{}.partial-{}", out.display(), std::process::id()));
    // Made new here (a folder or a link already at that name is refused, never written through), so that
    // everything below it is this run's own.
    std::fs::create_dir(&partial).with_context(|| format!("cannot write {}", partial.display()))?;
    let written = write_image(&partial, image, &root, &files, &course_text)
        .and_then(|()| write_question(&partial.join("question"), image, only, chosen));
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(e);
    }
    if let Err(e) = std::fs::rename(&partial, out) {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(e).with_context(|| format!("cannot write {}", out.display()));
    }
    Ok(format!(
        "wrote {}: build and push image/ ({} files of the course, Dockerfile, setup.sh) as {image}, then copy question/ \
         into your course's questions/",
        out.display(),
        files.len()
    ))
}

/// `image/`: the course's files (with its course file as given), the setup script and the Dockerfile.
fn write_image(partial: &Path, image: &str, root: &Path, files: &[PathBuf], course_text: &str) -> Result<()> {
    let course_dir = partial.join("image/course");
    for f in files {
        let target = course_dir.join(f);
        std::fs::create_dir_all(target.parent().expect("a folder"))?;
        if f == Path::new("exercises/course.toml") {
            std::fs::write(&target, course_text)?;
        } else {
            std::fs::copy(root.join(f), &target).with_context(|| format!("cannot copy {}", f.display()))?;
        }
    }
    std::fs::write(partial.join("image/setup.sh"), SETUP)?;
    std::fs::write(partial.join("image/Dockerfile"), DOCKERFILE.replace("{{IMAGE}}", image))?;
    Ok(())
}

/// `question/`: PrairieLearn's info.json (its external grader runs our autograder) and the page a student
/// reads, listing the files to upload.
fn write_question(question: &Path, image: &str, only: &[String], chosen: &[&'static Exercise]) -> Result<()> {
    let names: Vec<&str> = chosen.iter().map(|e| e.name).collect();
    let mut uploads: Vec<String> = names.iter().map(|n| format!("{n}.rs")).collect();
    if chosen.iter().any(|e| e.homework) {
        uploads.push("homework-cross-attention.ipynb".into());
    }
    let digest = format!("{:x}", <md5::Md5 as md5::Digest>::digest(format!("{image} {}", names.join(","))));
    let uuid =
        format!("{}-{}-{}-{}-{}", &digest[..8], &digest[8..12], &digest[12..16], &digest[16..20], &digest[20..32]);
    let title = match chosen {
        [one] => format!("Transformer anatomy: {}", one.summary),
        _ => format!("Transformer anatomy: {} exercises", chosen.len()),
    };
    let info = json!({
        "uuid": uuid,
        "title": title,
        "topic": "Transformer anatomy",
        "tags": ["rust", "transformers"],
        "type": "v3",
        "singleVariant": true,
        "gradingMethod": "External",
        "externalGradingOptions": {
            "enabled": true,
            "image": image,
            "entrypoint": format!("anatomy exercises autograder run --platform prairielearn --root /grade{}", only_args(only)),
            "timeout": 120,
        },
    });
    std::fs::create_dir_all(question)?;
    std::fs::write(question.join("info.json"), serde_json::to_string_pretty(&info)? + "\n")?;
    let list: Vec<String> =
        chosen.iter().map(|e| format!("<li><code>{}.rs</code>: {}</li>", e.name, e.summary)).collect();
    let notebook = if chosen.iter().any(|e| e.homework) {
        "<p>The homework may be handed in as the notebook <code>homework-cross-attention.ipynb</code> instead: \
         only its solution cell is graded.</p>\n"
    } else {
        ""
    };
    std::fs::write(
        question.join("question.html"),
        QUESTION
            .replace("{{LIST}}", &list.join("\n    "))
            .replace("{{NOTEBOOK}}", notebook)
            .replace("{{FILES}}", &uploads.join(", ")),
    )?;
    Ok(())
}

/// PrairieLearn's image: Ubuntu 22.04 with what `setup.sh` installs and builds, the course in /opt/anatomy.
const DOCKERFILE: &str = r#"# PrairieLearn's external grader for the transformer-anatomy course (`anatomy exercises autograder
# prairielearn`). Build and push it once; PrairieLearn pulls it for every submission:
#   docker build -t {{IMAGE}} . && docker push {{IMAGE}}
# Grading runs without network: everything is built here, and a submission costs seconds.
FROM ubuntu:22.04
COPY course /opt/anatomy/course
COPY setup.sh /opt/anatomy/setup.sh
RUN bash /opt/anatomy/setup.sh /opt/anatomy/course
"#;

/// PrairieLearn's question page: the task, a file upload, the grader's results.
const QUESTION: &str = r#"<pl-question-panel>
  <p>Upload your exercise files of the transformer-anatomy course, as many as you have done; a file you
  leave out counts as not done. Each one is compiled on its own and checked in a sandbox, on inputs drawn
  afresh, and the results name what went wrong with a hint.</p>
  <ul>
    {{LIST}}
  </ul>
  {{NOTEBOOK}}  <pl-file-upload optional-file-names="{{FILES}}"></pl-file-upload>
</pl-question-panel>

<pl-submission-panel>
  <pl-external-grader-results></pl-external-grader-results>
  <pl-file-preview></pl-file-preview>
</pl-submission-panel>
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::helpers::scratch;
    use anatomy_course::EXERCISES;

    fn exercise(name: &str) -> &'static Exercise {
        EXERCISES.iter().find(|e| e.name == name).unwrap()
    }

    #[test]
    fn each_exercise_gives_its_points_and_a_message_with_the_first_hint_when_not_passed() {
        let chosen = [exercise("layer_norm"), exercise("cross_attention")];
        let course = CourseFile {
            points: EXERCISES.iter().map(|e| (e.name.to_string(), e.points)).collect(),
            late: None,
            assignments: vec![],
        };
        let outcome = |e: &Exercise, status| Outcome {
            name: e.name,
            label: e.name.into(),
            status,
            message: "a <b>".into(),
            parts: None,
            mistake: None,
            output: None,
        };
        let outcomes = [outcome(chosen[0], Status::Passed), outcome(chosen[1], Status::DoesNotCompile)];
        let r = results_of(&outcomes, &Tier::None, &chosen, &course);
        assert_eq!((r["gradable"].as_bool(), r["score"].as_f64()), (Some(true), Some(0.2)), "5 of 25");
        assert!(r["message"]
            .as_str()
            .unwrap()
            .starts_with("1 of 2 exercises passed: 5 of 25 points. Graded with no sandbox"));
        let tests = r["tests"].as_array().unwrap();
        assert_eq!(tests[0]["name"], format!("{}. layer_norm", chosen[0].number()));
        assert_eq!(tests[1]["name"], format!("{}. cross_attention (the chapter's homework)", chosen[1].number()));
        assert_eq!((tests[0]["points"].as_f64(), tests[0]["max_points"].as_f64()), (Some(5.0), Some(5.0)));
        assert_eq!((tests[1]["points"].as_f64(), tests[1]["max_points"].as_f64()), (Some(0.0), Some(20.0)));
        assert_eq!(tests[0]["message"], "passed");
        let hint = &chosen[1].hint_levels()[0];
        assert_eq!(tests[1]["message"], format!("does not compile: a <b>\n\nHint: {hint}"));
        assert_eq!(tests[1]["description"], chosen[1].summary);
        let nothing = results_of(&[], &Tier::None, &[], &course);
        assert_eq!(nothing["score"], 0.0, "no points to earn is a score of 0, not NaN");
        assert!(nothing["message"].as_str().unwrap().starts_with("0 of 0 exercises passed: 0 of 0 points."));
    }

    #[test]
    fn the_question_has_a_stable_id_from_its_image_and_exercises_and_lists_the_files_to_upload() {
        use md5::{Digest, Md5};
        let dir = scratch("prairielearn-question");
        let chosen = [exercise("layer_norm"), exercise("cross_attention")];
        write_question(&dir, "me/grader", &["layer_norm".into(), "cross_attention".into()], &chosen).unwrap();
        let info: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("info.json")).unwrap()).unwrap();
        let digest = format!("{:x}", Md5::digest(b"me/grader layer_norm,cross_attention"));
        let uuid = [&digest[..8], &digest[8..12], &digest[12..16], &digest[16..20], &digest[20..]].join("-");
        assert_eq!(info["uuid"], uuid);
        assert_eq!(info["title"], "Transformer anatomy: 2 exercises");
        assert_eq!((info["type"].as_str(), info["gradingMethod"].as_str()), (Some("v3"), Some("External")));
        let options = &info["externalGradingOptions"];
        assert_eq!(options["image"], "me/grader");
        assert_eq!(
            options["entrypoint"],
            "anatomy exercises autograder run --platform prairielearn --root /grade --only layer_norm,cross_attention"
        );
        let page = std::fs::read_to_string(dir.join("question.html")).unwrap();
        let files = "optional-file-names=\"layer_norm.rs, cross_attention.rs, homework-cross-attention.ipynb\"";
        assert!(page.contains(files) && page.contains("<code>homework-cross-attention.ipynb</code> instead"), "{page}");
        assert!(page.contains(&format!("<li><code>layer_norm.rs</code>: {}</li>", chosen[0].summary)));
        assert!(!page.contains("{{"), "every blank filled: {page}");
        let one = dir.join("one");
        write_question(&one, "me/grader", &[], &chosen[..1]).unwrap();
        let info: Value = serde_json::from_str(&std::fs::read_to_string(one.join("info.json")).unwrap()).unwrap();
        assert_eq!(info["title"], format!("Transformer anatomy: {}", chosen[0].summary));
        assert_ne!(info["uuid"], uuid, "another set of exercises, another question");
        let page = std::fs::read_to_string(one.join("question.html")).unwrap();
        assert!(page.contains("optional-file-names=\"layer_norm.rs\"") && !page.contains("ipynb"), "{page}");
    }

    #[test]
    fn the_folders_are_never_written_over_an_existing_one_nor_for_an_image_name_with_spaces() {
        let dir = scratch("prairielearn-refusals");
        let course = Path::new("exercises/course.toml");
        let error = write_folders(&dir, "me/grader", &[], &[], course).unwrap_err().to_string();
        assert_eq!(
            error,
            format!("{} already exists: name a new folder, so that nothing of yours is overwritten", dir.display())
        );
        for image in ["", "me/my grader", "me/grader\n"] {
            let error = write_folders(&dir.join("new"), image, &[], &[], course).unwrap_err().to_string();
            assert!(error.starts_with(&format!("--image {image:?}: give the Docker Hub name")), "{error}");
        }
        assert!(!dir.join("new").exists());
    }
}
