//! Gradescope and PrairieLearn without them: the autograder zip and PrairieLearn's image and question
//! folders are built and read back, and the one command their containers run grades an honest, a
//! partial, an empty, a hostile, a late (Gradescope) and a broken submission under a temporary root laid
//! out as `/autograder` or `/grade`, in the Landlock tier (their containers refuse user namespaces).
//! Every `results.json` is validated against `tests/gradescope/results.schema.json` or
//! `tests/prairielearn/results.schema.json`, written from each platform's specification.
//!
//! It needs `solutions/` (the submissions are made from them).
#![cfg(anatomy_solutions)]

#[path = "../../../tests/common/class.rs"]
mod class;
#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;
#[path = "../../../tests/common/schema.rs"]
mod schema;

use std::path::{Path, PathBuf};
use std::process::Command;

use anatomy_course::project_root;
use anatomy_course::{find, EXERCISES};
use class::{full_marks, hand_in_solutions};
use schema::{schema, schema_of, violations};
use serde_json::Value;
use test_dir::TestDir;

/// The grader started as a platform starts it: in `folder`, outside the checkout, and without the LIBTORCH
/// that `cargo test` exported from the checkout's `.cargo/config.toml` (a platform's harness has no such
/// variable; the grader's own build must find LibTorch wherever it is started). A LIBTORCH of one's own
/// (`make test CUDA=1`) is kept.
fn started_in(folder: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_anatomy"));
    command.current_dir(folder);
    if std::env::var_os("LIBTORCH").is_some_and(|l| Path::new(&l) == project_root().join(".deps/libtorch/torch")) {
        command.env_remove("LIBTORCH");
    }
    command
}

/// Runs `run_autograder`'s command on `root` (in the Landlock tier) and returns its results, validated. It
/// starts in `root`, as Gradescope starts it in /autograder.
fn run_autograder(root: &Path, extra: &[&str]) -> Value {
    let o = started_in(root)
        .args(["exercises", "autograder", "run", "--root", root.to_str().unwrap()])
        .args(extra)
        .env("ANATOMY_BWRAP", root.join("no-bwrap-in-this-container"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "run_autograder failed: {err}");
    let text = std::fs::read_to_string(root.join("results/results.json")).expect("results.json is always written");
    let results: Value = serde_json::from_str(&text).expect("results.json is JSON");
    let problems = violations(&schema(), &results, "results");
    assert!(problems.is_empty(), "{}:\n{}", root.display(), problems.join("\n"));
    results
}

fn submission(root: &Path) -> PathBuf {
    let folder = root.join("submission");
    std::fs::create_dir_all(&folder).unwrap();
    folder
}

fn test<'a>(results: &'a Value, exercise: &str) -> &'a Value {
    results["tests"].as_array().unwrap().iter().find(|t| t["name"].as_str().unwrap().contains(exercise)).unwrap()
}

/// The solutions, but a reader of a secret kept in `outside`, a shortcut (layer_norm), a link to the
/// secret (causal_mask) and a compile-time bomb (mean_pooling: a macro that doubles until the compiler's
/// memory runs out). Returns the secret's text.
const HOSTILE: [&str; 5] = ["feed_forward", "layer_norm", "causal_mask", "mean_pooling", "warmup_schedule"];

/// What the compile-time bomb's test says.
const BOMB_WORDS: &str = "compiling needed more than 2 GiB of memory";

fn hostile_submission(folder: &Path, outside: &Path) -> String {
    hand_in_solutions(folder);
    std::fs::create_dir_all(outside).unwrap();
    let marker = format!("SECRET-{}-{}", std::process::id(), folder.parent().unwrap().display());
    std::fs::write(outside.join("secret.txt"), &marker).unwrap();
    let reader = std::fs::read_to_string(project_root().join("tests/hostile-class/reader.feed_forward.rs"))
        .unwrap()
        .replace("{{CLASSMATE}}", outside.join("secret.txt").to_str().unwrap())
        .replace("{{SECRET}}", outside.join("secret.txt").to_str().unwrap());
    std::fs::write(folder.join("feed_forward.rs"), reader).unwrap();
    std::fs::copy(project_root().join("tests/hostile-class/shortcuts/layer_norm.rs"), folder.join("layer_norm.rs"))
        .unwrap();
    std::fs::remove_file(folder.join("causal_mask.rs")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), folder.join("causal_mask.rs")).unwrap();
    let bomb = project_root().join("tests/hostile-class/macro_bomb.mean_pooling.rs");
    std::fs::copy(bomb, folder.join("mean_pooling.rs")).unwrap();
    // Nested past what the grader reads: once, this aborted the run and wrote no results.json at all.
    let deep = project_root().join("tests/hostile-class/deep.warmup_schedule.rs");
    std::fs::copy(deep, folder.join("warmup_schedule.rs")).unwrap();
    marker
}

#[test]
fn run_autograder_writes_valid_results_for_every_kind_of_submission() {
    let work = TestDir::new("autograder");

    // Honest: every solution at the top of the submission.
    let honest = work.join("honest");
    hand_in_solutions(&submission(&honest));
    let results = run_autograder(&honest, &[]);
    assert_eq!(results["score"], full_marks(), "{results}");
    assert_eq!(results["tests"].as_array().unwrap().len(), EXERCISES.len());
    assert!(results["output"].as_str().unwrap().contains("Graded in the landlock sandbox"), "{results}");
    let homework = test(&results, "cross_attention");
    assert_eq!((homework["score"].as_f64(), homework["max_score"].as_f64()), (Some(20.0), Some(20.0)));
    assert_eq!(homework["number"], "9");
    // Gradescope shows the seconds; how many is not a test's to say (a loaded machine took over 30 once).
    assert!(results["execution_time"].as_u64().is_some(), "{results}");

    // Partial: in an exercises/ folder, with a merge_heads that forgets to transpose back (half of
    // split_heads' points) and a layer norm with the unbiased variance (none of its points).
    let partial = work.join("partial");
    let folder = submission(&partial).join("exercises");
    hand_in_solutions(&folder);
    let mistakes = project_root().join("tests/exercise-mistakes");
    std::fs::copy(mistakes.join("split_heads/merged_without_transpose.rs"), folder.join("split_heads.rs")).unwrap();
    std::fs::copy(mistakes.join("layer_norm/unbiased_variance.rs"), folder.join("layer_norm.rs")).unwrap();
    let results = run_autograder(&partial, &[]);
    assert_eq!(results["score"], 97.5, "{results}");
    let split = test(&results, "split_heads");
    assert_eq!((split["status"].as_str(), split["score"].as_f64()), (Some("failed"), Some(2.5)));
    let layer_norm = test(&results, "layer_norm")["output"].as_str().unwrap().to_string();
    assert!(layer_norm.contains("unbiased") && layer_norm.contains("Hint: "), "{layer_norm}");

    // Empty: nothing handed in, every test "not done".
    let empty = work.join("empty");
    submission(&empty);
    let results = run_autograder(&empty, &[]);
    assert_eq!(results["score"], 0.0);
    for t in results["tests"].as_array().unwrap() {
        assert_eq!(t["status"], "failed");
        assert!(t["output"].as_str().unwrap().starts_with("**not done**"), "{t}");
    }

    // Hostile: the solutions, but a reader of a secret, a shortcut and a link; each fails its own test,
    // the others pass, nothing is written outside, nothing leaks.
    let hostile = work.join("hostile");
    let outside = work.join("outside");
    let marker = hostile_submission(&submission(&hostile), &outside);
    let results = run_autograder(&hostile, &[]);
    let text = results.to_string();
    assert!(!text.contains(&marker), "the secret leaked into results.json");
    for e in EXERCISES {
        let t = test(&results, e.name);
        assert_eq!(t["status"], if HOSTILE.contains(&e.name) { "failed" } else { "passed" }, "{}: {t}", e.name);
    }
    assert!(test(&results, "feed_forward")["output"].as_str().unwrap().contains("cannot read"));
    assert!(test(&results, "layer_norm")["output"].as_str().unwrap().contains("uses `layer_norm`"));
    assert!(test(&results, "causal_mask")["output"].as_str().unwrap().contains("is a symbolic link"));
    // The compile-time bomb fails its own test with the limit it met; every other test is scored.
    let bomb = test(&results, "mean_pooling");
    assert!(bomb["output"].as_str().unwrap().contains(BOMB_WORDS), "{bomb}");
    let deep = test(&results, "warmup_schedule")["output"].as_str().unwrap().to_string();
    assert!(deep.contains("warmup_schedule.rs:4: nests brackets more than 64 levels deep"), "{deep}");
    assert_eq!(results["score"], full_marks() - 5.0 - 5.0 - 5.0 - 5.0 - 5.0, "{results}");
    let outside_files: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
    assert_eq!(outside_files.len(), 1, "something was written outside the submission");

    // Isolation and values, in the containers' tier: files that reach for the other exercises' checks (a
    // thread left drawing random numbers, an abort set for the next panic beside an untouched stub) cost no
    // other test, and answers read by value and shape (a negated view, a shape that changes on the second
    // call, an answer over one frame, memory that keeps growing) fail their own test alone.
    let isolation = work.join("isolation");
    let folder = submission(&isolation);
    hand_in_solutions(&folder);
    let isolated = [
        ("crossforge.layer_norm", "layer_norm", "unbiased"),
        ("drawer.embeddings", "embeddings", ""),
        ("globals.sinusoidal_positions", "sinusoidal_positions", ""),
        ("globals.warmup_schedule", "warmup_schedule", "not done"),
        ("negview.classifier_head", "classifier_head", "differs from the expected values"),
        ("shapes.mean_pooling", "mean_pooling", "expected shape [1, 8], got [8]"),
        ("giant.shift_right", "shift_right", "over the 8 MiB the grader reads of one answer"),
        ("grower.gpt_block", "gpt_block", "used more than its 2 GiB of memory"),
    ];
    for (file, exercise, _) in isolated {
        let from = project_root().join(format!("tests/hostile-class/{file}.rs"));
        std::fs::copy(from, folder.join(format!("{exercise}.rs"))).unwrap();
    }
    let results = run_autograder(&isolation, &[]);
    for e in EXERCISES {
        let t = test(&results, e.name);
        match isolated.iter().find(|i| i.1 == e.name).map(|i| i.2).filter(|w| !w.is_empty()) {
            None => assert_eq!(t["status"], "passed", "{}: {t}", e.name),
            Some(words) => {
                assert_eq!(t["status"], "failed", "{}: {t}", e.name);
                assert!(t["output"].as_str().unwrap().contains(words), "{}: {t}", e.name);
            }
        }
    }

    // Late: two days after the due date, with a course that takes 10 % a day.
    let late = work.join("late");
    hand_in_solutions(&submission(&late));
    std::fs::write(
        late.join("submission_metadata.json"),
        r#"{"created_at": "2026-11-20T10:00:00.123456-08:00", "assignment": {"due_date": "2026-11-18T23:59:00.000000-08:00"}, "users": [{"name": "Ada"}]}"#,
    )
    .unwrap();
    let course = late.join("course.toml");
    let points = std::fs::read_to_string(project_root().join("exercises/course.toml")).unwrap();
    std::fs::write(&course, format!("{points}\n[late]\npenalty_per_day = 0.1\nmax_days = 5\n")).unwrap();
    let results = run_autograder(&late, &["--course", course.to_str().unwrap()]);
    assert_eq!(results["score"], 84.0, "{results}");
    assert!(results["output"].as_str().unwrap().contains("Submitted 2 days late"), "{results}");
    // Without a policy, the same submission keeps every point.
    let results = run_autograder(&late, &[]);
    assert_eq!(results["score"], full_marks());
    // A submission time the policy cannot read is never taken as on time: the student reads why.
    let metadata = late.join("submission_metadata.json");
    std::fs::write(&metadata, r#"{"created_at": 1763661600, "assignment": {"due_date": "2026-11-18T23:59:00Z"}}"#)
        .unwrap();
    let results = run_autograder(&late, &["--course", course.to_str().unwrap(), "--only", "layer_norm"]);
    assert_eq!(results["score"], 0.0, "{results}");
    let said = format!("{}: created_at is the number 1763661600, not a date", metadata.display());
    assert!(results["output"].as_str().unwrap().contains(&said), "{results}");

    // Broken: the grader cannot run (no submission folder): still a valid file, with a visible failure.
    let broken = work.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    let results = run_autograder(&broken, &[]);
    assert_eq!(results["score"], 0.0);
    assert_eq!(results["tests"][0]["name"], "The grader itself");
    assert!(results["tests"][0]["output"].as_str().unwrap().contains("submission does not exist"), "{results}");

    // --only: the homework alone, out of 20.
    let results = run_autograder(&honest, &["--only", "cross_attention"]);
    assert_eq!(results["tests"].as_array().unwrap().len(), 1);
    assert_eq!(results["score"], 20.0);
}

#[test]
fn the_gradescope_zip_holds_setup_run_autograder_and_the_course_without_solutions() {
    let work = TestDir::new("autograder-zip");
    let zip = work.join("autograder.zip");
    let o = Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["exercises", "autograder", "gradescope", zip.to_str().unwrap(), "--only", "cross_attention"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Read it back with Python's zipfile: names, modes, and the two scripts' text.
    let listing = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nfor i in z.infolist(): print(i.filename, oct(i.external_attr >> 16 & 0o777))\nopen(sys.argv[2] + '/setup.sh', 'wb').write(z.read('setup.sh'))\nprint('RUN', z.read('run_autograder').decode().strip().splitlines()[-1])",
            zip.to_str().unwrap(),
            work.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout).to_string();
    assert!(listing.contains("setup.sh 0o755") && listing.contains("run_autograder 0o755"), "{listing}");
    assert!(
        listing.contains("course/Cargo.toml 0o644") && listing.contains("course/scripts/setup.sh 0o755"),
        "{listing}"
    );
    assert!(listing.contains("course/crates/intake/src/rules.rs"), "{listing}");
    assert!(!listing.contains("course/solutions/") && !listing.contains("course/tests/hostile-class/"), "{listing}");
    assert!(
        listing.contains("RUN exec anatomy exercises autograder run --root /autograder --only cross_attention"),
        "{listing}"
    );
    let syntax = Command::new("bash").args(["-n", work.join("setup.sh").to_str().unwrap()]).status().unwrap();
    assert!(syntax.success(), "setup.sh is not valid bash");
    let _ = find("cross_attention").unwrap();

    // Bad input: not a .zip, a missing folder, an unknown exercise, an output that is a link (to a file of
    // the instructor's): one line, exit 1, nothing written, nothing written through the link.
    let victim = work.join("victim.txt");
    std::fs::write(&victim, "the instructor's").unwrap();
    let linked = work.join("linked.zip");
    std::os::unix::fs::symlink(&victim, &linked).unwrap();
    // A link where the old code put its partial file: never written through.
    std::os::unix::fs::symlink(&victim, work.join("autograder.zip.partial")).unwrap();
    for (args, words) in [
        (vec![work.join("autograder.tar").to_str().unwrap().to_string()], "name the autograder file OUT.zip"),
        (vec![work.join("nowhere/a.zip").to_str().unwrap().to_string()], "does not exist"),
        (vec![zip.to_str().unwrap().to_string(), "--only".into(), "cross_atention".into()], "no exercise named"),
        (vec![linked.to_str().unwrap().to_string()], "linked.zip is a symbolic link: name a new file"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_anatomy"))
            .args(["exercises", "autograder", "gradescope"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(words), "{err}");
    }
    assert!(!work.join("autograder.tar").exists());
    let o =
        Command::new(env!("CARGO_BIN_EXE_anatomy")).args(["exercises", "autograder", "gradescope"]).arg(&zip).output();
    assert!(o.unwrap().status.success(), "a second zip over the first");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the instructor's");
    assert!(std::fs::symlink_metadata(&linked).unwrap().is_symlink());
}

/// Runs the command PrairieLearn's `info.json` names on `root` (laid out as `/grade`, Landlock tier) and
/// returns its results, validated against PrairieLearn's schema. It starts in `/`, outside both the checkout
/// and the job's folder.
fn run_prairielearn(root: &Path, extra: &[&str]) -> Value {
    let o = started_in(Path::new("/"))
        .args(["exercises", "autograder", "run", "--platform", "prairielearn", "--root", root.to_str().unwrap()])
        .args(extra)
        .env("ANATOMY_BWRAP", root.join("no-bwrap-in-this-container"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("results/results.json")).unwrap()).unwrap();
    let problems = violations(&schema_of("prairielearn"), &results, "results");
    assert!(problems.is_empty(), "{}:\n{}", root.display(), problems.join("\n"));
    // Gradable results need a score; the others, the reason.
    match results["gradable"].as_bool() {
        Some(false) => assert!(results["format_errors"].as_array().is_some_and(|e| !e.is_empty()), "{results}"),
        _ => assert!(results["score"].is_number(), "{results}"),
    }
    results
}

fn student(root: &Path) -> PathBuf {
    let folder = root.join("student");
    std::fs::create_dir_all(&folder).unwrap();
    folder
}

#[test]
fn prairielearn_results_are_valid_for_every_kind_of_submission() {
    let work = TestDir::new("prairielearn");
    let honest = work.join("honest");
    hand_in_solutions(&student(&honest));
    let results = run_prairielearn(&honest, &[]);
    assert_eq!((results["gradable"].as_bool(), results["score"].as_f64()), (Some(true), Some(1.0)), "{results}");
    let tests = results["tests"].as_array().unwrap();
    assert_eq!(tests.len(), EXERCISES.len());
    assert!(tests.iter().all(|t| t["points"] == t["max_points"]), "{results}");
    assert!(results["message"].as_str().unwrap().contains("Graded in the landlock sandbox (ABI"), "{results}");

    // Partial: half of split_heads, none of layer_norm: 7.5 points short of full marks.
    let partial = work.join("partial");
    let folder = student(&partial);
    hand_in_solutions(&folder);
    let mistakes = project_root().join("tests/exercise-mistakes");
    std::fs::copy(mistakes.join("split_heads/merged_without_transpose.rs"), folder.join("split_heads.rs")).unwrap();
    std::fs::copy(mistakes.join("layer_norm/unbiased_variance.rs"), folder.join("layer_norm.rs")).unwrap();
    let results = run_prairielearn(&partial, &[]);
    assert!((results["score"].as_f64().unwrap() - (full_marks() - 7.5) / full_marks()).abs() < 1e-9, "{results}");
    let split = test(&results, "split_heads");
    assert_eq!((split["points"].as_f64(), split["max_points"].as_f64()), (Some(2.5), Some(5.0)));
    let layer_norm = test(&results, "layer_norm")["message"].as_str().unwrap().to_string();
    assert!(layer_norm.starts_with("failed: ") && layer_norm.contains("unbiased") && layer_norm.contains("Hint: "));

    // Empty: gradable, nothing earned, every exercise "not done".
    let empty = work.join("empty");
    student(&empty);
    let results = run_prairielearn(&empty, &[]);
    assert_eq!(results["score"], 0.0);
    assert!(results["tests"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["message"].as_str().unwrap().starts_with("not done")));

    // Hostile: each attack fails its own exercise only; the secret stays out; nothing written outside.
    let hostile = work.join("hostile");
    let outside = work.join("outside");
    let marker = hostile_submission(&student(&hostile), &outside);
    let results = run_prairielearn(&hostile, &[]);
    assert!(!results.to_string().contains(&marker), "the secret leaked into results.json");
    for e in EXERCISES {
        let t = test(&results, e.name);
        let full = t["points"] == t["max_points"];
        assert_eq!(full, !HOSTILE.contains(&e.name), "{}: {t}", e.name);
    }
    let bomb = test(&results, "mean_pooling");
    assert!(bomb["message"].as_str().unwrap().contains(BOMB_WORDS), "{bomb}");
    let deep = test(&results, "warmup_schedule")["message"].as_str().unwrap().to_string();
    assert!(deep.contains("more than 64 levels deep"), "{deep}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1, "something was written outside the submission");

    // The homework as the released notebook, filled in: its solution cell is graded, out of 20.
    let notebook = work.join("notebook");
    let (code, _, err) = class::anatomy(&["notebooks", "release", "--out", notebook.join("release").to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let released = std::fs::read_to_string(notebook.join("release/homework-cross-attention.ipynb")).unwrap();
    let solution = std::fs::read_to_string(find("cross_attention").unwrap().solution_file()).unwrap();
    let body = solution.split(") -> (Tensor, Tensor) {\n").nth(1).unwrap().rsplit_once("}").unwrap().0;
    let mut nb: Value = serde_json::from_str(&released).unwrap();
    for cell in nb["cells"].as_array_mut().unwrap() {
        if cell["metadata"]["nbgrader"]["solution"] == true {
            let source: String = cell["source"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
            cell["source"] = Value::String(source.replace("    todo!()\n", body));
        }
    }
    std::fs::write(student(&notebook).join("homework-cross-attention.ipynb"), nb.to_string()).unwrap();
    let results = run_prairielearn(&notebook, &["--only", "cross_attention"]);
    assert_eq!(results["score"], 1.0, "{results}");
    assert_eq!(results["tests"][0]["points"], 20.0);

    // Broken: no student folder. Not gradable (no attempt counted), with the reason.
    let broken = work.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    let results = run_prairielearn(&broken, &[]);
    assert_eq!(results["gradable"], false);
    assert!(results["format_errors"][0].as_str().unwrap().contains("student does not exist"), "{results}");
}

#[test]
fn the_prairielearn_folders_hold_the_image_and_a_question() {
    let work = TestDir::new("prairielearn-folders");
    let out = work.join("pl");
    let (code, _, err) = class::anatomy(&[
        "exercises",
        "autograder",
        "prairielearn",
        out.to_str().unwrap(),
        "--image",
        "me/anatomy-grader",
        "--only",
        "cross_attention,causal_mask",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let dockerfile = std::fs::read_to_string(out.join("image/Dockerfile")).unwrap();
    assert!(
        dockerfile.contains("FROM ubuntu:22.04")
            && dockerfile.contains("RUN bash /opt/anatomy/setup.sh /opt/anatomy/course")
    );
    assert!(dockerfile.contains("docker build -t me/anatomy-grader ."));
    let syntax = Command::new("bash").args(["-n", out.join("image/setup.sh").to_str().unwrap()]).status().unwrap();
    assert!(syntax.success(), "setup.sh is not valid bash");
    assert!(out.join("image/course/crates/intake/src/rules.rs").is_file());
    assert!(out.join("image/course/scripts/setup.sh").is_file());
    assert!(!out.join("image/course/solutions").exists() && !out.join("image/course/tests/hostile-class").exists());
    let info: Value = serde_json::from_str(&std::fs::read_to_string(out.join("question/info.json")).unwrap()).unwrap();
    assert_eq!(info["gradingMethod"], "External");
    assert_eq!(info["externalGradingOptions"]["image"], "me/anatomy-grader");
    assert_eq!(
        info["externalGradingOptions"]["entrypoint"],
        "anatomy exercises autograder run --platform prairielearn --root /grade --only cross_attention,causal_mask"
    );
    let uuid = info["uuid"].as_str().unwrap();
    assert!(uuid.len() == 36 && uuid.split('-').map(str::len).eq([8, 4, 4, 4, 12]), "{uuid}");
    let html = std::fs::read_to_string(out.join("question/question.html")).unwrap();
    assert!(
        html.contains(r#"<pl-file-upload optional-file-names="cross_attention.rs, causal_mask.rs, homework-cross-attention.ipynb">"#),
        "{html}"
    );
    assert!(html.contains("<pl-external-grader-results>"));

    // Bad input: an existing folder, a link (even one to nowhere), an empty image name: one line, exit 1,
    // nothing written.
    let dangling = work.join("dangling");
    std::os::unix::fs::symlink(work.join("nowhere"), &dangling).unwrap();
    for (args, words) in [
        (vec![out.to_str().unwrap(), "--image", "me/x"], "already exists"),
        (vec![dangling.to_str().unwrap(), "--image", "me/x"], "already exists"),
        (vec![work.join("other").to_str().unwrap(), "--image", ""], "give the Docker Hub name"),
    ] {
        let mut all = vec!["exercises", "autograder", "prairielearn"];
        all.extend(args);
        let (code, _, err) = class::anatomy(&all);
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains(words) && err.trim().lines().count() == 1, "{err}");
    }
    assert!(!work.join("other").exists() && !work.join("nowhere").exists());
}

/// The schema check can fail: each of these would show the student "The autograder failed to execute
/// correctly".
#[test]
fn the_schema_check_finds_what_gradescope_would_refuse() {
    let good = serde_json::json!({"score": 1.0, "output": "", "tests": [
        {"name": "a", "score": 1.0, "max_score": 1.0, "status": "passed", "output": "", "output_format": "md"}]});
    assert!(violations(&schema(), &good, "r").is_empty());
    for (path, bad) in [
        ("/score", serde_json::json!("1")),
        ("/tests/0/status", serde_json::json!("ok")),
        ("/tests/0/output_format", serde_json::json!("markdown")),
        ("/tests/0/score", serde_json::json!(-1.0)),
    ] {
        let mut v = good.clone();
        *v.pointer_mut(path).unwrap() = bad;
        assert!(!violations(&schema(), &v, "r").is_empty(), "{path}");
    }
    let mut v = good.clone();
    v["tests"][0].as_object_mut().unwrap().remove("max_score");
    assert!(!violations(&schema(), &v, "r").is_empty());
    v = good.clone();
    v["grade"] = serde_json::json!(1);
    assert!(!violations(&schema(), &v, "r").is_empty());

    // PrairieLearn's: a score is a share, gradable is a boolean, and every test has points and max_points.
    let pl = schema_of("prairielearn");
    let good =
        serde_json::json!({"gradable": true, "score": 0.5, "tests": [{"name": "a", "points": 1, "max_points": 2}]});
    assert!(violations(&pl, &good, "r").is_empty());
    for (path, bad) in [
        ("/score", serde_json::json!(50.0)),
        ("/gradable", serde_json::json!("yes")),
        ("/tests/0/points", serde_json::json!(-1)),
    ] {
        let mut v = good.clone();
        *v.pointer_mut(path).unwrap() = bad;
        assert!(!violations(&pl, &v, "r").is_empty(), "{path}");
    }
    let mut v = good.clone();
    v["tests"][0].as_object_mut().unwrap().remove("max_points");
    assert!(!violations(&pl, &v, "r").is_empty());
}

/// GitHub Classroom's grading step, run as the workflow runs it (Landlock tier, as on Ubuntu 24.04's
/// runners): its output `result` decodes to the reporter's JSON with the right points and statuses.
#[test]
fn the_classroom_step_gives_the_reporter_points_per_exercise() {
    let work = TestDir::new("classroom");
    let repository = work.join("repository");
    let folder = repository.join("exercises");
    hand_in_solutions(&folder);
    let mistakes = project_root().join("tests/exercise-mistakes");
    std::fs::copy(mistakes.join("causal_mask/no_diagonal.rs"), folder.join("causal_mask.rs")).unwrap();
    std::fs::write(folder.join("beam_step.rs"), find("beam_step").unwrap().stub).unwrap();
    std::fs::write(folder.join("shift_right.rs"), "pub fn shift_right( not Rust").unwrap();
    let output = work.join("github-output");
    std::fs::write(&output, "earlier=kept\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["exercises", "autograder", "classroom", "--github-output", output.to_str().unwrap()])
        .env("ANATOMY_EXERCISES_DIR", &folder)
        .env("ANATOMY_BWRAP", work.join("no-bwrap-on-this-runner"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "not everything passed: {err}");
    let (n, most) = (EXERCISES.len(), full_marks());
    let line =
        format!("{} of {n} exercises passed: {} of {most} points (graded in the landlock sandbox)", n - 3, most - 12.5);
    assert!(err.contains(&line), "{err}");
    let text = std::fs::read_to_string(&output).unwrap();
    assert!(text.starts_with("earlier=kept\nresult="), "the step's output is appended: {text}");
    let encoded = text.lines().find_map(|l| l.strip_prefix("result=")).unwrap();
    let decoded = Command::new("python3")
        .args(["-c", "import base64, sys; sys.stdout.write(base64.b64decode(sys.argv[1]).decode())", encoded])
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&decoded.stdout).unwrap();
    assert_eq!((result["version"].as_u64(), result["status"].as_str()), (Some(1), Some("fail")));
    assert_eq!(result["max_score"], full_marks());
    let tests = result["tests"].as_array().unwrap();
    assert_eq!(tests.len(), EXERCISES.len());
    let by_name = |n: &str| tests.iter().find(|t| t["name"].as_str().unwrap().ends_with(&format!(". {n}"))).unwrap();
    assert_eq!(
        (by_name("cross_attention")["status"].as_str(), by_name("cross_attention")["score"].as_f64()),
        (Some("pass"), Some(20.0))
    );
    assert_eq!(
        (by_name("causal_mask")["status"].as_str(), by_name("causal_mask")["score"].as_f64()),
        (Some("fail"), Some(2.5))
    );
    assert_eq!(
        (by_name("beam_step")["status"].as_str(), by_name("beam_step")["score"].as_f64()),
        (Some("fail"), Some(0.0))
    );
    assert_eq!(by_name("shift_right")["status"], "error");
    assert_eq!(by_name("layer_norm")["filename"], "exercises/layer_norm.rs");
    let sum: f64 = tests.iter().map(|t| t["score"].as_f64().unwrap()).sum();
    assert_eq!(sum, full_marks() - 12.5, "the reporter sums the scores");
    for t in tests {
        for key in ["name", "status", "score", "message", "test_code", "filename", "line_no", "duration"] {
            assert!(t.get(key).is_some(), "{key} missing in {t}");
        }
    }
}
