//! The course on the platforms instructors grade with: Gradescope ([`gradescope`]: the autograder zip and
//! its `results.json`, with the course's late policy), PrairieLearn ([`prairielearn`]: the image and
//! question folders and its `results.json`), GitHub Classroom ([`classroom`]: the reporter's output) and
//! nbgrader ([`nbgrader`]: the released homework notebooks and their checksums).
//! Each builds the platform's files from a grading and reads the platform's inputs; the command line only
//! chooses one and prints what it says.
//!
//! Every submission is graded in the strongest sandbox the container offers (these platforms refuse user
//! namespaces: the Landlock tier). The results file is always written, and always valid: when grading
//! itself fails, Gradescope's shows a failed test that says what happened and PrairieLearn's marks the
//! submission "not gradable" (no attempt lost) with the reason.

#[cfg(test)]
mod agreement;
#[cfg(test)]
#[path = "../../../tests/common/test_dir.rs"]
pub(crate) mod test_dir;
pub mod classroom;
pub mod gradescope;
pub mod handout;
pub mod nbgrader;
pub mod prairielearn;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use anatomy_course::kept_back::KeptBack;
use anatomy_course::{Exercise, Outcome, Status};
use anatomy_grade::points::CourseFile;
use anatomy_grade::sandbox::{self, SandboxChoice, Tier};

/// The platforms whose grading containers [`run`] serves, by their names on the command line (`--platform
/// NAME`, clap::ValueEnum).
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

/// Grades the submission under `root` and writes `root/results/results.json` in the platform's format.
/// Returns the file and its score once it is written, whatever the grades.
pub fn run(
    root: &Path,
    platform: Platform,
    chosen: &[&'static Exercise],
    course: Result<CourseFile>,
) -> Result<(PathBuf, Value)> {
    let started = Instant::now();
    let mut results = match platform {
        Platform::Gradescope => {
            let mut r = gradescope::results(root, chosen, course)
                .unwrap_or_else(|e| gradescope::failure(&format!("{e:#}"), chosen));
            r["execution_time"] = json!(started.elapsed().as_secs_f64().ceil() as u64);
            r
        }
        Platform::Prairielearn => prairielearn::results(root, chosen, course).unwrap_or_else(|e| {
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
    anatomy_course::write_whole(&path, &serde_json::to_string_pretty(&results)?)?;
    Ok((path, results["score"].clone()))
}

/// The folder a platform puts the student's files in, `root/name`, or an error naming the platform.
pub(crate) fn hand_in_folder(root: &Path, name: &str, platform: &str) -> Result<std::path::PathBuf> {
    let folder = root.join(name);
    if !folder.is_dir() {
        anyhow::bail!("{} does not exist: {platform} puts the student's files there", folder.display());
    }
    Ok(folder)
}

/// Grades one student's files (`FOLDER/exercises/NAME.rs` or `FOLDER/NAME.rs`; a missing one is the stub)
/// in the strongest sandbox the machine offers, as a class's student is graded ([`anatomy_class`]).
pub(crate) fn grade_folder(folder: &Path, chosen: &[&'static Exercise]) -> Result<(Vec<Outcome>, Tier)> {
    let tier = sandbox::choose(SandboxChoice::Auto)?;
    Ok((anatomy_class::grade_student(folder, chosen, &tier)?, tier))
}

/// "Graded in the landlock sandbox (ABI 7), seccomp and limits…": the tier, named once.
fn graded_in(tier: &Tier) -> String {
    let words = tier.words();
    match words.strip_prefix(tier.name()) {
        Some(rest) => format!("Graded in the {} sandbox{rest}.", tier.name()),
        None => format!("Graded with {words}."),
    }
}

/// Points to a hundredth, as every score is rounded (`points::score`); the platforms' tests check it.
#[cfg(test)]
use anatomy_grade::points::hundredth as round;

/// A test's feedback: the verdict, the message and, when not passed, the first hint.
fn feedback(o: &Outcome) -> String {
    match o.status {
        Status::Passed => format!("**{}**", o.status.words()),
        _ => format!("**{}**\n\n{}", o.status.words(), anatomy_report::sheet::message_and_hint(o)),
    }
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
    let course_text = anatomy_grade::points::course_text(course)?;
    CourseFile::parse(course, &course_text, &anatomy_gradebook::export::course_keys())?;
    let root = anatomy_course::project_root();
    let kept = KeptBack::read(&root).with_context(|| format!("cannot read {}", anatomy_course::kept_back::FILE))?;
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
        .filter(|f| !kept.holds(&f.to_string_lossy()))
        .filter(|f| std::fs::symlink_metadata(root.join(f)).is_ok_and(|m| m.is_file()))
        .collect();
    Ok((root, files, course_text))
}

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
cargo build --release --package anatomy-cli
ln -sf "$course/target/release/anatomy" /usr/local/bin/anatomy
# Build the grader's probe recipe now, grading the untouched stubs once (they are "not done").
mkdir -p /tmp/warm-up/submission
anatomy exercises autograder run --root /tmp/warm-up
rm -rf /tmp/warm-up
"#;

#[cfg(test)]
#[path = "../../../tests/common/schema.rs"]
mod schema;

#[cfg(test)]
mod tests {
    //! The platforms' formats against their schemas, from outcomes made here: no grading, no binary.
    use super::{classroom, gradescope, prairielearn, schema};
    use anatomy_course::{Outcome, Status, EXERCISES};
    use anatomy_grade::points::{self, Late};
    use anatomy_grade::sandbox::Tier;

    /// One outcome per exercise, every status in turn, and a check of parts half passed.
    fn outcomes() -> Vec<Outcome> {
        let statuses = [Status::Passed, Status::Failed, Status::DoesNotCompile, Status::NotDone];
        EXERCISES
            .iter()
            .enumerate()
            .map(|(i, e)| Outcome {
                name: e.name,
                label: e.name.to_string(),
                status: if e.name == "split_heads" { Status::Failed } else { statuses[i % 4] },
                message: format!("message of {} with ~~~~ fences and <html>", e.name),
                parts: (e.name == "split_heads").then_some((1, 2)),
                mistake: None,
                output: None,
            })
            .collect()
    }

    #[test]
    fn gradescope_results_keep_the_schema_and_the_late_policy() {
        let course = anatomy_gradebook::export::load_course(&points::default_file()).unwrap();
        let chosen: Vec<_> = EXERCISES.iter().collect();
        let outcomes = outcomes();
        let policy = Late { penalty_per_day: 0.1, max_days: 5 };
        let results = gradescope::results_of(&outcomes, &Tier::Landlock(7), &chosen, &course, Some((2, policy)));
        let problems = schema::violations(&schema::schema(), &results, "results");
        assert!(problems.is_empty(), "{problems:?}");
        let on_time: f64 = outcomes.iter().map(|o| course.earned(o)).sum();
        assert!(on_time > 0.0 && (results["score"].as_f64().unwrap() - on_time * 0.8).abs() < 0.01, "{results}");
        let tests = results["tests"].as_array().unwrap();
        assert_eq!(tests.len(), EXERCISES.len());
        let passed = tests.iter().filter(|t| t["status"] == "passed").count();
        assert_eq!(passed, outcomes.iter().filter(|o| o.status == Status::Passed).count());
        assert!(results["output"].as_str().unwrap().contains("Submitted 2 days late"), "{results}");
        assert!(results["output"].as_str().unwrap().contains("Graded in the landlock sandbox (ABI 7)"));
        let failure = gradescope::failure("the disk is full", &chosen);
        assert!(schema::violations(&schema::schema(), &failure, "failure").is_empty(), "{failure}");
        // The check can fail: a test without its score is refused.
        let mut broken = results.clone();
        broken["tests"][0].as_object_mut().unwrap().remove("score");
        assert!(!schema::violations(&schema::schema(), &broken, "results").is_empty());
    }

    #[test]
    fn prairielearn_results_keep_the_schema_and_give_the_score_as_a_share() {
        let course = anatomy_gradebook::export::load_course(&points::default_file()).unwrap();
        let chosen: Vec<_> = EXERCISES.iter().collect();
        let outcomes = outcomes();
        let results = prairielearn::results_of(&outcomes, &Tier::Landlock(7), &chosen, &course);
        let problems = schema::violations(&schema::schema_of("prairielearn"), &results, "results");
        assert!(problems.is_empty(), "{problems:?}");
        let earned: f64 = outcomes.iter().map(|o| course.earned(o)).sum();
        let max: f64 = EXERCISES.iter().map(|e| course.max(e.name)).sum();
        assert!((results["score"].as_f64().unwrap() - earned / max).abs() < 1e-9, "{results}");
        let split_heads = format!("{}. split_heads", anatomy_course::find("split_heads").unwrap().number());
        let split = results["tests"].as_array().unwrap().iter().find(|t| t["name"] == *split_heads).unwrap();
        assert_eq!(split["points"], course.max("split_heads") / 2.0, "{split}");
    }

    #[test]
    fn classroom_s_result_is_base64_json_with_each_exercise_s_status_and_points() {
        let course = anatomy_gradebook::export::load_course(&points::default_file()).unwrap();
        let chosen: Vec<_> = EXERCISES.iter().collect();
        let outcomes = outcomes();
        let millis = 1_000 * EXERCISES.len() as u64;
        let report = classroom::report_of(&outcomes, &Tier::Landlock(7), &chosen, &course, millis).unwrap();
        let result: serde_json::Value = serde_json::from_slice(&base64::decode(&report.encoded).unwrap()).unwrap();
        assert_eq!((&result["version"], &result["status"]), (&1.into(), &"fail".into()), "{result}");
        let max: f64 = EXERCISES.iter().map(|e| course.max(e.name)).sum();
        assert!((result["max_score"].as_f64().unwrap() - max).abs() < 1e-9, "{result}");
        let tests = result["tests"].as_array().unwrap();
        assert_eq!(tests.len(), EXERCISES.len());
        for ((t, o), e) in tests.iter().zip(&outcomes).zip(EXERCISES) {
            let status = match o.status {
                Status::Passed => "pass",
                Status::DoesNotCompile => "error",
                _ => "fail",
            };
            assert_eq!(t["status"], status, "{t}");
            assert_eq!(t["name"], format!("{}. {}", e.number(), e.name));
            assert!((t["score"].as_f64().unwrap() - course.earned(o)).abs() < 0.01, "{t}");
            assert_eq!((&t["duration"], &t["filename"]), (&1_000.into(), &format!("exercises/{}.rs", e.name).into()));
        }
        let split_heads = format!("{}. split_heads", anatomy_course::find("split_heads").unwrap().number());
        let split = tests.iter().find(|t| t["name"] == *split_heads).unwrap();
        assert!((split["score"].as_f64().unwrap() - course.max("split_heads") / 2.0).abs() < 0.01, "{split}");
        let passed = outcomes.iter().filter(|o| o.status == Status::Passed).count();
        assert!(!report.all_passed && passed > 0);
        assert!(report.summary.starts_with(&format!("{passed} of {} exercises passed: ", EXERCISES.len())));
        assert!(report.summary.ends_with("(graded in the landlock sandbox)"), "{}", report.summary);
        // Every exercise passed: the step passes.
        let all: Vec<Outcome> = outcomes.into_iter().map(|o| Outcome { status: Status::Passed, ..o }).collect();
        let report = classroom::report_of(&all, &Tier::None, &chosen, &course, 0).unwrap();
        let result: serde_json::Value = serde_json::from_slice(&base64::decode(&report.encoded).unwrap()).unwrap();
        assert!(report.all_passed && result["status"] == "pass", "{result}");
    }
}

#[cfg(test)]
mod helpers {
    //! The small pieces every platform shares: names, the sandbox's line, rounding, feedback, the `--only`
    //! arguments and the folders (what is kept back: `anatomy_course::kept_back`).
    use super::*;
    use anatomy_grade::sandbox::Tier;

    /// A test's own folder, new and empty, removed when the test ends, whether it passed or failed.
    pub(crate) fn scratch(name: &str) -> crate::test_dir::TestDir {
        crate::test_dir::TestDir::new(&format!("platforms-{name}"))
    }

    #[test]
    fn each_platform_has_its_command_line_name_and_the_folder_it_mounts() {
        use clap::ValueEnum;
        let named: Vec<_> = Platform::value_variants()
            .iter()
            .map(|p| (p.to_possible_value().unwrap().get_name().to_string(), p.root()))
            .collect();
        assert_eq!(named, [("gradescope".to_string(), "/autograder"), ("prairielearn".to_string(), "/grade")]);
    }

    #[test]
    fn the_sandbox_is_named_once_in_its_line_and_points_round_to_a_hundredth() {
        assert_eq!(
            graded_in(&Tier::Bubblewrap("/usr/bin/bwrap".into())),
            "Graded in the bubblewrap sandbox (namespaces, seccomp, limits)."
        );
        assert_eq!(
            graded_in(&Tier::None),
            "Graded with no sandbox (--no-sandbox: the students' code ran with the grader's rights)."
        );
        let landlock = graded_in(&Tier::Landlock(4));
        assert!(
            landlock.starts_with("Graded in the landlock sandbox (ABI 4), seccomp and limits")
                && landlock.ends_with('.')
        );
        assert_eq!(landlock.matches("landlock").count(), 1, "{landlock}");
        let rounded: Vec<f64> = [22.0 / 3.0, 2.0 / 3.0, 2.5, 4.0, 0.004, -1.0 / 3.0].into_iter().map(round).collect();
        assert_eq!(rounded, [7.33, 0.67, 2.5, 4.0, 0.0, -0.33]);
    }

    #[test]
    fn feedback_is_the_verdict_in_bold_and_below_it_the_message_and_first_hint_when_not_passed() {
        let outcome = |status| Outcome {
            name: "causal_mask",
            label: "causal_mask".into(),
            status,
            message: "row 0 sees row 1".into(),
            parts: None,
            mistake: None,
            output: None,
        };
        assert_eq!(feedback(&outcome(Status::Passed)), "**passed**");
        let hint = &anatomy_course::EXERCISES.iter().find(|e| e.name == "causal_mask").unwrap().hint_levels()[0];
        let expected = format!("**does not compile**\n\n~~~~text\nrow 0 sees row 1\n~~~~\n\nHint: {hint}\n");
        assert_eq!(feedback(&outcome(Status::DoesNotCompile)), expected);
        assert!(feedback(&outcome(Status::NotDone)).starts_with("**not done**\n\n~~~~text\n"));
    }

    #[test]
    fn only_arguments_join_the_names_and_nothing_is_added_without_them() {
        assert_eq!(only_args(&[]), "");
        assert_eq!(only_args(&["layer_norm".into()]), " --only layer_norm");
        assert_eq!(only_args(&["layer_norm".into(), "causal_mask".into()]), " --only layer_norm,causal_mask");
    }

    #[test]
    fn the_hand_in_folder_must_be_a_folder_and_an_executable_has_an_execute_bit() {
        use std::os::unix::fs::PermissionsExt;
        let root = scratch("folders");
        std::fs::create_dir(root.join("submission")).unwrap();
        std::fs::write(root.join("student"), "a file, not a folder").unwrap();
        assert_eq!(hand_in_folder(&root, "submission", "Gradescope").unwrap(), root.join("submission"));
        for name in ["student", "missing"] {
            let error = hand_in_folder(&root, name, "PrairieLearn").unwrap_err().to_string();
            assert_eq!(
                error,
                format!("{} does not exist: PrairieLearn puts the student's files there", root.join(name).display())
            );
        }
        let file = root.join("student");
        for (mode, runs) in [(0o644, false), (0o755, true), (0o100, true), (0o001, true), (0o600, false)] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(executable(&file), runs, "{mode:o}");
        }
        assert!(!executable(&root.join("missing")));
    }
}
