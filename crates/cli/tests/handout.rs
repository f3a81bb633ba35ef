//! `make handout DIR=…` writes the students' copy: everything but the solutions and the instructors' tests,
//! built on its own, every exercise "not done", the solutions closed. The handout checks the build and the
//! list itself (`anatomy exercises handout`, crates/platforms/src/handout.rs); this test runs it through
//! make, as documented, and checks what was kept back.
#![cfg(anatomy_solutions)]

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use anatomy_course::project_root;

#[test]
fn the_handout_keeps_back_the_solutions_and_the_instructors_tests_and_starts_from_nothing_done() {
    let parent = std::env::temp_dir().join(format!("anatomy-handout-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&parent);
    std::fs::create_dir_all(&parent).unwrap();
    let dir = parent.join("students");
    let make = |dir: &std::path::Path| {
        Command::new("make")
            .args(["--no-print-directory", "handout"])
            .arg(format!("DIR={}", dir.display()))
            .current_dir(project_root())
            .output()
            .unwrap()
    };
    let started = std::time::Instant::now();
    let o = make(&dir);
    eprintln!("make handout: {:.1} s", started.elapsed().as_secs_f64());
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    let said =
        format!("lists all {} exercises as not done and keeps the solutions back", anatomy_course::EXERCISES.len());
    assert!(out.contains(&said), "{out}");
    for kept_back in [
        "solutions",
        "crates/cli/tests/exercises.rs",
        "tests/exercise-mistakes",
        "crates/cli/tests/grading_hostile.rs",
        "tests/hostile-class",
        "crates/cli/tests/similarity.rs",
        "tests/similarity-class",
        "crates/cli/tests/class_grading.rs",
    ] {
        assert!(!dir.join(kept_back).exists(), "the handout contains {kept_back}");
    }
    for given in [
        "Cargo.toml",
        "crates/course/src/stubs/cross_attention.rs",
        "exercises/hints/cross_attention.md",
        "exercises/course.toml",
        "README.md",
    ] {
        assert!(dir.join(given).is_file(), "the handout lacks {given}");
    }
    // The homework notebook is the released one, and its chapter with it: no reference, a todo!().
    for released in ["chapters/homework-cross-attention.md", "notebooks/homework-cross-attention.ipynb"] {
        let text = std::fs::read_to_string(dir.join(released)).unwrap();
        assert!(!text.contains("BEGIN SOLUTION") && !text.contains("q.bmm(") && text.contains("todo!()"), "{released}");
        // The instructors' shows the task too: the answer is put in from solutions/ (`release --source`).
        let original = std::fs::read_to_string(project_root().join(released)).unwrap();
        assert!(!original.contains("q.bmm(") && original.contains("todo!()"), "the instructors' {released}");
    }
    // A second handout into the same folder is refused, and nothing of the first is touched.
    let o = make(&dir);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("already exists: name a new folder"));
    assert!(dir.join("Cargo.toml").is_file());
    assert!(!dir.join(".github").exists(), "a plain handout has no Classroom workflow");

    a_moved_copy_finds_its_own_folders(&dir, &parent.join("moved"));

    // CLASSROOM=1: a GitHub Classroom template — the workflow, the stubs as the students' files, tracked.
    let classroom = parent.join("classroom");
    let o = Command::new("make")
        .args(["--no-print-directory", "handout", "CLASSROOM=1"])
        .arg(format!("DIR={}", classroom.display()))
        .current_dir(project_root())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let workflow = std::fs::read_to_string(classroom.join(".github/workflows/classroom.yml")).unwrap();
    assert!(workflow.contains("exercises autograder classroom --github-output \"$GITHUB_OUTPUT\""), "{workflow}");
    assert!(workflow.contains("classroom-resources/autograding-grading-reporter@v1"), "{workflow}");
    assert!(workflow.contains("EXERCISES_RESULTS: \"${{steps.exercises.outputs.result}}\""), "{workflow}");
    for e in anatomy_course::EXERCISES {
        let file = std::fs::read_to_string(classroom.join("exercises").join(format!("{}.rs", e.name))).unwrap();
        assert_eq!(file, e.stub, "{}", e.name);
    }
    let ignore = std::fs::read_to_string(classroom.join(".gitignore")).unwrap();
    assert!(!ignore.contains("/exercises/*.rs") && ignore.contains("/target/"), "{ignore}");
    assert!(!classroom.join("exercises/.progress.json").exists());
    let _ = std::fs::remove_dir_all(&parent);
}

/// Stopped with Ctrl+C while it builds (SIGINT to its whole process group, as a terminal sends it), the
/// handout leaves nothing behind: neither the folder it was asked for nor the partial copy it was building
/// beside it, which the grader's cleanup removes on SIGINT, SIGTERM and SIGHUP.
#[test]
fn a_handout_stopped_while_it_builds_leaves_nothing_behind() {
    let parent = std::env::temp_dir().join(format!("anatomy-handout-stopped-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&parent);
    std::fs::create_dir_all(&parent).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["exercises", "handout"])
        .arg(parent.join("students"))
        .current_dir(project_root())
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let building = lines.by_ref().map_while(Result::ok).find(|l| l.contains("building the copy on its own"));
    assert!(building.is_some(), "the handout never said it was building");
    let partial: Vec<_> = std::fs::read_dir(&parent).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(partial.len() == 1 && partial[0].to_string_lossy().starts_with("students.partial-"), "{partial:?}");
    let (pid, group) = (child.id(), format!("-{}", child.id()));
    assert!(Command::new("kill").args(["-INT", "--", &group]).status().unwrap().success());
    assert_eq!(child.wait().unwrap().code(), Some(130), "stopped by SIGINT: 128 + 2");
    let left: Vec<_> = std::fs::read_dir(&parent).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // Nor a half-linked start of the copy's build (linked beside it and renamed when whole), which the
    // next handout would take as whole and build its dependencies from scratch.
    let linking = project_root().join(format!("target/handout-build/debug.linking-{pid}"));
    assert!(!linking.exists(), "left behind: {}", linking.display());
    let _ = std::fs::remove_dir_all(&parent);
}

/// A copy moved (renamed) after its first build still works from its new place, as the README says to run
/// it: `list` counts its own exercises/ folder, `check` grades and builds there, `watch` grades once, the
/// tour runs, and nothing is written at the old place (the root used to be fixed in the binary when it was built).
fn a_moved_copy_finds_its_own_folders(dir: &std::path::Path, moved: &std::path::Path) {
    let started = std::time::Instant::now();
    std::fs::rename(dir, moved).unwrap();
    let root = project_root();
    let cargo = |args: &[&str]| {
        let mut c = Command::new(env!("CARGO"));
        c.arg("anatomy").args(args).current_dir(moved);
        c.env("LIBTORCH", root.join(".deps/libtorch/torch")).env("CARGO_TARGET_DIR", root.join("target/handout-build"));
        c.env_remove("ANATOMY_EXERCISES_DIR");
        c
    };
    let run = |args: &[&str]| {
        let o = cargo(args).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let total = anatomy_course::EXERCISES.len();
    let (code, out, err) = run(&["exercises", "list"]);
    eprintln!(
        "moved copy: its first list (cargo's build there included) after {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains(&format!("0 of {total} done; progress is kept in exercises/.progress.json")), "{out}");
    std::fs::copy(root.join("solutions/causal_mask.rs"), moved.join("exercises/causal_mask.rs")).unwrap();
    let (code, out, err) = run(&["exercises", "check", "causal_mask"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("1 of 1 exercises passed"), "{out}");
    let (_, out, _) = run(&["exercises", "list"]);
    assert!(out.contains(&format!("1 of {total} done")), "{out}");
    // One grade in the watch mode, started at that exercise, then q.
    let mut watch =
        cargo(&["exercises", "watch", "causal_mask"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(watch.stdout.take().unwrap()).lines();
    let number = anatomy_course::find("causal_mask").unwrap().number();
    let verdict = lines.by_ref().map_while(Result::ok).find(|l| l.contains(&format!("exercise {number} causal_mask")));
    assert!(verdict.is_some_and(|l| l.starts_with("✓ ") && l.contains("(exercises/causal_mask.rs): passed")));
    drop(watch.stdin.take());
    assert!(watch.wait().unwrap().success());
    // And the tour, from the moved copy, with the model its set-up would put there (linked to this one's):
    // found under the copy's new place when the tour runs.
    std::os::unix::fs::symlink(root.join("models"), moved.join("models")).unwrap();
    let (code, out, err) = run(&["tour", "the cat"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("steps 3 to 15 run on random weights"), "{out}");
    assert!(!dir.exists(), "something was written at the old place: {}", dir.display());
    eprintln!("moved copy: list, check, watch and the tour in {:.1} s", started.elapsed().as_secs_f64());
}
