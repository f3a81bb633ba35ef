//! `anatomy exercises autograder`: the course on Gradescope and PrairieLearn.
//!
//! - `gradescope OUT.zip` writes the autograder zip Gradescope asks for: `setup.sh` (run once when the
//!   image is built, with network: Rust, LibTorch from the same pinned wheel, the built grader, its probe
//!   recipe warmed), `run_autograder` (one line: the command below) and, in `course/`, the course without
//!   the instructors' files. Gradescope unpacks it into `/autograder/source`.
//! - `prairielearn OUT --image NAME` writes PrairieLearn's external grader: `image/` (a Dockerfile that
//!   runs the same `setup.sh` on the course) and `question/` (`info.json` naming the image and the entry
//!   point, `question.html` with a file upload and the grader's results).
//! - `run --root ROOT [--platform gradescope|prairielearn]` grades the one submission (`ROOT/submission`,
//!   or PrairieLearn's `ROOT/student`; files at the top or in `exercises/`, or the homework notebook) in
//!   the strongest sandbox the container offers (these platforms refuse user namespaces: the Landlock
//!   tier) and writes `ROOT/results/results.json` in the platform's format: one test per exercise with
//!   its points (partial credit) and the feedback. For Gradescope the late policy of the course file is
//!   applied to the due date in `ROOT/submission_metadata.json`. The file is always written, and always
//!   valid: when grading itself fails, Gradescope's shows a failed test that says what happened and
//!   PrairieLearn's marks the submission "not gradable" (no attempt lost) with the reason.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anatomy_exercises::course::Course;
use anatomy_exercises::grading;
use anatomy_exercises::sandbox::{self, Limits, Tier, Wanted};
use anatomy_exercises::{Exercise, Outcome, Status};
use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

/// The platforms whose grading containers `run` serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Platform {
    Gradescope,
    Prairielearn,
}

impl Platform {
    /// Where the platform mounts the grading job.
    pub fn root(self) -> &'static str {
        match self {
            Platform::Gradescope => "/autograder",
            Platform::Prairielearn => "/grade",
        }
    }
}

/// `run`: grades the submission under `root` and writes `root/results/results.json` in the platform's
/// format. Returns Ok once the file is written, whatever the grades.
pub fn run(root: &Path, platform: Platform, chosen: &[&'static Exercise], course: Result<Course>) -> Result<()> {
    let started = Instant::now();
    let mut results = match platform {
        Platform::Gradescope => {
            let mut r = grade(root, chosen, course).unwrap_or_else(|e| failure(&format!("{e:#}"), chosen));
            r["execution_time"] = json!(started.elapsed().as_secs_f64().ceil() as u64);
            r
        }
        Platform::Prairielearn => prairielearn_results(root, chosen, course).unwrap_or_else(|e| {
            json!({
                "gradable": false,
                "format_errors": [format!("{e:#}")],
                "message": "The grader could not grade this submission (no attempt is counted); the reason is below.",
            })
        }),
    };
    if platform == Platform::Prairielearn {
        results["execution_time"] = json!(started.elapsed().as_secs_f64());
    }
    let folder = root.join("results");
    std::fs::create_dir_all(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
    let path = folder.join("results.json");
    anatomy_exercises::gradebook::write_whole(&path, &serde_json::to_string_pretty(&results)?)?;
    eprintln!("wrote {} (score {})", path.display(), results["score"]);
    Ok(())
}

/// The results of a grading that could not run: one visible failed test that says why.
fn failure(why: &str, chosen: &[&'static Exercise]) -> Value {
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

fn grade(root: &Path, chosen: &[&'static Exercise], course: Result<Course>) -> Result<Value> {
    let course = course?;
    let submission = root.join("submission");
    if !submission.is_dir() {
        bail!("{} does not exist: Gradescope puts the student's files there", submission.display());
    }
    let (outcomes, tier) = grade_folder(&submission, chosen)?;
    let late = lateness(root, &course)?;
    let kept = late.map(|(days, policy)| policy.kept(days)).unwrap_or(1.0);
    let mut tests = Vec::new();
    let (mut earned, mut max) = (0.0, 0.0);
    for (e, o) in chosen.iter().zip(&outcomes) {
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
        graded_in(&tier)
    );
    if let Some((days, policy)) = late.filter(|(days, _)| *days > 0) {
        output += &format!(
            "\n\nSubmitted {days} day{} late: the course keeps {:.0} % of the points (a {:.0} % penalty per day, \
             nothing after {} days).",
            if days == 1 { "" } else { "s" },
            policy.kept(days) * 100.0,
            policy.penalty_per_day * 100.0,
            policy.max_days
        );
    }
    Ok(json!({
        "score": round(earned),
        "output": output,
        "output_format": "md",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }))
}

/// PrairieLearn's `results.json` for the submission in `root/student`: the score as a share (0–1), and
/// per exercise `points` of `max_points` with the feedback as its message (what
/// `<pl-external-grader-results>` shows).
fn prairielearn_results(root: &Path, chosen: &[&'static Exercise], course: Result<Course>) -> Result<Value> {
    let course = course?;
    let student = root.join("student");
    if !student.is_dir() {
        bail!("{} does not exist: PrairieLearn puts the student's files there", student.display());
    }
    let (outcomes, tier) = grade_folder(&student, chosen)?;
    let (mut earned, mut max, mut tests) = (0.0, 0.0, Vec::new());
    for (e, o) in chosen.iter().zip(&outcomes) {
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
    Ok(json!({
        "gradable": true,
        "score": if max > 0.0 { earned / max } else { 0.0 },
        "message": format!(
            "{passed} of {} exercises passed: {} of {max} points. {}",
            outcomes.len(),
            round(earned),
            graded_in(&tier)
        ),
        "tests": tests,
    }))
}

/// Grades one student's files (`FOLDER/exercises/NAME.rs` or `FOLDER/NAME.rs`; a missing one is the stub)
/// in the strongest sandbox the machine offers.
fn grade_folder(folder: &Path, chosen: &[&'static Exercise]) -> Result<(Vec<Outcome>, Tier)> {
    let tier = sandbox::choose(Wanted::Auto)?;
    let unit = grading::student_unit(folder, None, chosen)?;
    let options = grading::Options { tier: tier.clone(), limits: Limits::default(), ..grading::Options::default() };
    Ok((grading::grade_units(vec![unit], &options, &|_| {})?.all()?.remove(0), tier))
}

/// `classroom`: grades the student's own repository (its `exercises/` folder) as GitHub Classroom's
/// workflow step, and gives the result the way `autograding-grading-reporter` reads it: a base64 JSON
/// `{"version": 1, "status", "max_score", "tests": [...]}` as the step's output `result` (appended to
/// the file `github_output` names, `$GITHUB_OUTPUT` in a workflow), with points per exercise — partial
/// credit, which the command grader's all-or-nothing steps cannot give. Returns whether all passed.
pub fn classroom(
    folder: &Path,
    chosen: &[&'static Exercise],
    course: &Course,
    github_output: Option<&Path>,
) -> Result<bool> {
    let started = Instant::now();
    let (outcomes, tier) = grade_folder(folder, chosen)?;
    let seconds = started.elapsed().as_millis() as u64;
    let mut tests = Vec::new();
    for (e, o) in chosen.iter().zip(&outcomes) {
        let status = match o.status {
            Status::Passed => "pass",
            Status::DoesNotCompile => "error",
            _ => "fail",
        };
        tests.push(json!({
            "name": format!("{}. {}", e.number(), e.name),
            "status": status,
            "score": round(course.earned(o)),
            "message": format!("{}: {}", o.status.words(), o.message),
            "test_code": format!("anatomy exercises check {}", e.name),
            "filename": format!("exercises/{}.rs", e.name),
            "line_no": 0,
            "duration": seconds / chosen.len().max(1) as u64,
        }));
    }
    let max: f64 = chosen.iter().map(|e| course.max(e.name)).sum();
    let all = outcomes.iter().all(|o| o.status == Status::Passed);
    let result = json!({"version": 1, "status": if all { "pass" } else { "fail" }, "max_score": max, "tests": tests});
    let encoded = base64::encode(serde_json::to_string(&result)?);
    if let Some(path) = github_output {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot write the step's output to {}", path.display()))?;
        writeln!(file, "result={encoded}")?;
    } else {
        println!("{encoded}");
    }
    let earned: f64 = outcomes.iter().map(|o| course.earned(o)).sum();
    eprintln!(
        "{} of {} exercises passed: {} of {max} points (graded in the {} sandbox)",
        outcomes.iter().filter(|o| o.status == Status::Passed).count(),
        outcomes.len(),
        round(earned),
        tier.name()
    );
    Ok(all)
}

/// "Graded in the landlock sandbox (ABI 7), seccomp and limits…": the tier, named once.
fn graded_in(tier: &Tier) -> String {
    let words = tier.words();
    match words.strip_prefix(tier.name()) {
        Some(rest) => format!("Graded in the {} sandbox{rest}.", tier.name()),
        None => format!("Graded with {words}."),
    }
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// A test's feedback: the verdict, the message and, when not passed, the first hint.
fn feedback(o: &Outcome) -> String {
    match o.status {
        Status::Passed => format!("**{}**", o.status.words()),
        _ => format!("**{}**\n\n{}", o.status.words(), anatomy_exercises::gradebook::message_and_hint(o)),
    }
}

/// How many days (rounded up) after the due date the submission came, with the course's policy; `None`
/// without a policy or without the dates.
fn lateness(root: &Path, course: &Course) -> Result<Option<(u32, anatomy_exercises::course::Late)>> {
    let Some(policy) = course.late else { return Ok(None) };
    let path = root.join("submission_metadata.json");
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(None) };
    let meta: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let date = |v: &Value| -> Result<Option<time::OffsetDateTime>> {
        match v.as_str() {
            None => Ok(None),
            Some(s) => time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
                .map(Some)
                .with_context(|| format!("{}: {s:?} is not a date", path.display())),
        }
    };
    let (Some(created), Some(due)) = (date(&meta["created_at"])?, date(&meta["assignment"]["due_date"])?) else {
        return Ok(None);
    };
    let seconds = (created - due).whole_seconds();
    let days = if seconds <= 0 { 0 } else { (seconds as u64).div_ceil(86_400) as u32 };
    Ok(Some((days, policy)))
}

/// What instructors keep back from the zip, as from a handout (`exercises/kept-back`, one path or folder
/// a line, read by `scripts/handout.sh` too): the solutions and their own tests.
fn kept_back(file: &Path) -> bool {
    let name = file.to_string_lossy();
    include_str!("../../../exercises/kept-back")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .any(|k| if k.ends_with('/') { name.starts_with(k) } else { name == k })
}

/// `gradescope OUT.zip`: the autograder zip.
pub fn gradescope_zip(out: &Path, only: &[String], course: &Path) -> Result<()> {
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
    eprintln!(
        "wrote {} ({} files of the course, setup.sh, run_autograder): upload it as the assignment's autograder",
        out.display(),
        files.len()
    );
    Ok(())
}

/// ` --only a,b` for the command lines the platforms run, or nothing.
fn only_args(only: &[String]) -> String {
    if only.is_empty() {
        String::new()
    } else {
        format!(" --only {}", only.join(","))
    }
}

fn executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0)
}

/// The course a platform gets: the project's folder, the regular files git tracks there less what
/// instructors keep back, and the text of the course file to put in `exercises/course.toml`.
fn course_files(course: &Path) -> Result<(PathBuf, Vec<PathBuf>, String)> {
    let course_text =
        std::fs::read_to_string(course).with_context(|| format!("cannot read the course file {}", course.display()))?;
    Course::load(course)?;
    let root = grading::project_root();
    let listed = Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["ls-files", "-z"])
        .output()
        .context("cannot run git: the course is taken from the files git tracks")?;
    if !listed.status.success() {
        bail!("{} is not a git checkout: the course is taken from the files git tracks", root.display());
    }
    let files: Vec<PathBuf> = listed
        .stdout
        .split(|&b| b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| PathBuf::from(String::from_utf8_lossy(f).into_owned()))
        .filter(|f| !kept_back(f))
        .filter(|f| std::fs::symlink_metadata(root.join(f)).is_ok_and(|m| m.is_file()))
        .collect();
    Ok((root, files, course_text))
}

/// `prairielearn OUT --image NAME`: PrairieLearn's external grader, as two folders to copy into place —
/// `image/` (build it and push it to Docker Hub as NAME) and `question/` (a question of the course).
/// Nothing is written when OUT exists; a failure leaves no half-written folder.
pub fn prairielearn(
    out: &Path,
    image: &str,
    only: &[String],
    chosen: &[&'static Exercise],
    course: &Path,
) -> Result<()> {
    if out.exists() {
        bail!("{} already exists: name a new folder, so that nothing of yours is overwritten", out.display());
    }
    if image.is_empty() || image.contains(char::is_whitespace) {
        bail!("--image {image:?}: give the Docker Hub name you will push the image as, e.g. me/anatomy-grader");
    }
    let (root, files, course_text) = course_files(course)?;
    let partial = PathBuf::from(format!("{}.partial-{}", out.display(), std::process::id()));
    let written = (|| -> Result<()> {
        let course_dir = partial.join("image/course");
        for f in &files {
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
        std::fs::create_dir_all(partial.join("question"))?;
        std::fs::write(partial.join("question/info.json"), serde_json::to_string_pretty(&info)? + "\n")?;
        let list: Vec<String> =
            chosen.iter().map(|e| format!("<li><code>{}.rs</code>: {}</li>", e.name, e.summary)).collect();
        let notebook = if chosen.iter().any(|e| e.homework) {
            "<p>The homework may be handed in as the notebook <code>homework-cross-attention.ipynb</code> instead: \
             only its solution cell is graded.</p>\n"
        } else {
            ""
        };
        std::fs::write(
            partial.join("question/question.html"),
            QUESTION
                .replace("{{LIST}}", &list.join("\n    "))
                .replace("{{NOTEBOOK}}", notebook)
                .replace("{{FILES}}", &uploads.join(", ")),
        )?;
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(e);
    }
    std::fs::rename(&partial, out).with_context(|| format!("cannot write {}", out.display()))?;
    eprintln!(
        "wrote {}: build and push image/ ({} files of the course, Dockerfile, setup.sh) as {image}, then copy question/ \
         into your course's questions/",
        out.display(),
        files.len()
    );
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

/// The image set-up of Gradescope (`setup.sh` in the zip, run as root with network on Ubuntu 22.04) and
/// of PrairieLearn's Dockerfile: the course's folder is its argument.
const SETUP: &str = r#"#!/usr/bin/env bash
# Run once, as root with network, when the grading image is built (Gradescope runs it from the zip on
# Ubuntu 22.04; PrairieLearn's Dockerfile runs it with the course's folder as its argument). It installs
# what grading needs and builds the grader, so that a submission costs seconds.
set -euo pipefail
# Gradescope unpacks the zip into /autograder/source: the course is its folder course/.
course=${1:-/autograder/source/course}
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq build-essential curl ca-certificates git python3 python3-pip python3-venv bubblewrap >/dev/null
# Rust (the course's minimum version is in course/Cargo.toml).
curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
ln -sf /root/.cargo/bin/cargo /root/.cargo/bin/rustc /root/.cargo/bin/rustup /usr/local/bin/
cd "$course"
# In the Landlock tier the students' code runs as nobody: it must be able to enter the course's folders.
folder=$course
while [[ $folder != / ]]; do chmod o+rx "$folder"; folder=$(dirname "$folder"); done
# LibTorch from the same pinned wheel (version and sha256 in scripts/setup.sh) and the model folder.
scripts/setup.sh
cargo build --release --bin anatomy
ln -sf "$course/target/release/anatomy" /usr/local/bin/anatomy
# Build the grader's probe recipe now, grading the untouched stubs once (they are "not done").
mkdir -p /tmp/warm-up/submission
anatomy exercises autograder run --root /tmp/warm-up
rm -rf /tmp/warm-up
"#;
