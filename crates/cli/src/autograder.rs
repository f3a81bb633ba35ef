//! `anatomy exercises autograder`: the course on Gradescope.
//!
//! - `gradescope OUT.zip` writes the autograder zip Gradescope asks for: `setup.sh` (run once when the
//!   image is built, with network: Rust, LibTorch from the same pinned wheel, the built grader, its probe
//!   recipe warmed), `run_autograder` (one line: the command below) and, in `course/`, the course without
//!   the instructors' files. Gradescope unpacks it into `/autograder/source`.
//! - `run --root /autograder` grades the one submission in `ROOT/submission` (files at the top or in
//!   `exercises/`) in the strongest sandbox the container offers (Gradescope's refuses user namespaces:
//!   the Landlock tier) and writes `ROOT/results/results.json`: one test per exercise with its points
//!   (partial credit), the feedback as Markdown, the late policy of the course file applied to the due
//!   date in `ROOT/submission_metadata.json`. The file is always written, and always valid: when grading
//!   itself fails, the failure is a visible failed test that says what happened.
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

/// `run`: grades the submission under `root` and writes `root/results/results.json`. Returns Ok once
/// the file is written, whatever the grades.
pub fn run(root: &Path, chosen: &[&'static Exercise], course: Result<Course>) -> Result<()> {
    let started = Instant::now();
    let mut results = match grade(root, chosen, course) {
        Ok(r) => r,
        Err(e) => failure(&format!("{e:#}"), chosen),
    };
    results["execution_time"] = json!(started.elapsed().as_secs_f64().ceil() as u64);
    let folder = root.join("results");
    std::fs::create_dir_all(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
    let path = folder.join("results.json");
    crate::exercises::write_whole(&path, &serde_json::to_string_pretty(&results)?)?;
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
        "{passed} of {} exercises passed: {} of {} points. Graded in the {} sandbox ({}).",
        outcomes.len(),
        round(earned),
        max,
        tier.name(),
        tier.words()
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

/// Grades one student's files (`FOLDER/exercises/NAME.rs` or `FOLDER/NAME.rs`; a missing one is the stub)
/// in the strongest sandbox the machine offers.
fn grade_folder(folder: &Path, chosen: &[&'static Exercise]) -> Result<(Vec<Outcome>, Tier)> {
    let tier = sandbox::choose(Wanted::Auto)?;
    let unit = grading::student_unit(folder, None, chosen)?;
    let options = grading::Options { tier: tier.clone(), limits: Limits::default(), ..grading::Options::default() };
    Ok((grading::grade_units(vec![unit], &options, &|_| {})?.remove(0), tier))
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

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// A test's feedback: the verdict, the message and, when not passed, the first hint.
fn feedback(o: &Outcome) -> String {
    match o.status {
        Status::Passed => format!("**{}**", o.status.words()),
        _ => format!("**{}**\n\n{}", o.status.words(), crate::exercises::message_and_hint(o)),
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
    let course_text =
        std::fs::read_to_string(course).with_context(|| format!("cannot read the course file {}", course.display()))?;
    Course::load(course)?;
    let root = grading::project_root();
    let listed = Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["ls-files", "-z"])
        .output()
        .context("cannot run git: the zip is made from the files git tracks")?;
    if !listed.status.success() {
        bail!("{} is not a git checkout: the zip is made from the files git tracks", root.display());
    }
    let files: Vec<PathBuf> = listed
        .stdout
        .split(|&b| b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| PathBuf::from(String::from_utf8_lossy(f).into_owned()))
        .filter(|f| !kept_back(f))
        .collect();
    let only_args = if only.is_empty() { String::new() } else { format!(" --only {}", only.join(",")) };
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
        let name = format!("course/{}", f.display());
        let full = root.join(f);
        let Ok(meta) = std::fs::symlink_metadata(&full) else { continue };
        if !meta.is_file() {
            continue;
        }
        let mode =
            if std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0 { program } else { plain };
        zip.start_file(name, mode)?;
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

/// Gradescope's image set-up (Ubuntu 22.04, as root, with network), kept in one place with the zip.
const SETUP: &str = r#"#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu 22.04, with network).
# It installs what grading needs and builds the grader, so that a submission costs seconds.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq build-essential curl ca-certificates git python3 python3-pip python3-venv bubblewrap >/dev/null
# Rust (the course's minimum version is in course/Cargo.toml).
curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
ln -sf /root/.cargo/bin/cargo /root/.cargo/bin/rustc /root/.cargo/bin/rustup /usr/local/bin/
# Gradescope unpacks the zip into /autograder/source: the course is its folder course/.
cd /autograder/source/course
# In the Landlock tier the students' code runs as nobody: it must be able to enter the course's folders.
chmod o+rx /autograder /autograder/source /autograder/source/course
# LibTorch from the same pinned wheel (version and sha256 in scripts/setup.sh) and the model folder.
scripts/setup.sh
cargo build --release --bin anatomy
ln -sf /autograder/source/course/target/release/anatomy /usr/local/bin/anatomy
# Build the grader's probe recipe now, grading the untouched stubs once (they are "not done").
mkdir -p /tmp/warm-up/submission
anatomy exercises autograder run --root /tmp/warm-up
rm -rf /tmp/warm-up
"#;
