//! PrairieLearn: its external grader as two folders (`image/`, a Dockerfile that runs the same `setup.sh`
//! on the course, and `question/`, `info.json` naming the image and the entry point and `question.html`
//! with a file upload), and `results.json` for the submission in `/grade/student`.
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::{course_files, grade_folder, graded_in, hand_in_folder, only_args, round, SETUP};
use crate::points::CourseFile;
use crate::sandbox::Tier;
use crate::{Exercise, Outcome, Status};

/// PrairieLearn's `results.json` for the submission in `root/student`: the score as a share (0–1), and
/// per exercise `points` of `max_points` with the feedback as its message (what
/// `<pl-external-grader-results>` shows).
pub fn results(root: &Path, chosen: &[&'static Exercise], course: Result<CourseFile>) -> Result<Value> {
    let course = course?;
    let (outcomes, tier) = grade_folder(&hand_in_folder(root, "student", "PrairieLearn")?, chosen)?;
    Ok(results_of(&outcomes, &tier, chosen, &course))
}

/// PrairieLearn's `results.json` for a grading's outcomes (one per chosen exercise, in order), graded in
/// `tier`.
pub fn results_of(outcomes: &[Outcome], tier: &Tier, chosen: &[&'static Exercise], course: &CourseFile) -> Value {
    let (mut earned, mut max, mut tests) = (0.0, 0.0, Vec::new());
    for (e, o) in chosen.iter().zip(outcomes) {
        earned += course.earned(o);
        max += course.max(e.name);
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
            "points": round(course.earned(o)),
            "max_points": course.max(e.name),
            "message": message,
        }));
    }
    let passed = outcomes.iter().filter(|o| o.status == Status::Passed).count();
    json!({
        "gradable": true,
        "score": if max > 0.0 { earned / max } else { 0.0 },
        "message": format!(
            "{passed} of {} exercises passed: {} of {max} points. {}",
            outcomes.len(),
            round(earned),
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
    if out.exists() {
        bail!("{} already exists: name a new folder, so that nothing of yours is overwritten", out.display());
    }
    if image.is_empty() || image.contains(char::is_whitespace) {
        bail!("--image {image:?}: give the Docker Hub name you will push the image as, e.g. me/anatomy-grader");
    }
    let (root, files, course_text) = course_files(course)?;
    let partial = PathBuf::from(format!("{}.partial-{}", out.display(), std::process::id()));
    let written = write_image(&partial, image, &root, &files, &course_text)
        .and_then(|()| write_question(&partial.join("question"), image, only, chosen));
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(e);
    }
    std::fs::rename(&partial, out).with_context(|| format!("cannot write {}", out.display()))?;
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
            std::fs::write(&target, &course_text)?;
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
