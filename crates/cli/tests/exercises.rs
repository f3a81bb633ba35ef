//! The instructors' tests of the exercises: every reference solution passes, every untouched stub is
//! "not done", every wrong answer in `tests/exercise-mistakes/` fails with the words its first lines
//! name, and a file that does not compile fails alone, with its compiler error — all graded together as
//! one unit (one build, one probe, the judge), unsandboxed: they are the instructors' own files. Then the
//! command line: list with progress, reset, the solution gate, the table in exercises/README.md, and the
//! watch mode driven through a pipe.
//!
//! They need `solutions/`: in a student's copy (without it) this file compiles to nothing.
#![cfg(anatomy_solutions)]

#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anatomy_course::project_root;
use anatomy_course::{find, Status, EXERCISES};
use anatomy_grade::grading::{grade, stub_file, Submission};
use test_dir::TestDir;

/// A folder of this test's own, removed when it ends.
fn scratch(name: &str) -> TestDir {
    TestDir::new(&format!("exercises-{name}"))
}

/// Every wrong answer: (exercise, file, the words its message must contain).
fn mistakes() -> Vec<(&'static str, PathBuf, String)> {
    let root = project_root().join("tests").join("exercise-mistakes");
    let mut found = Vec::new();
    for e in EXERCISES {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(e.name))
            .unwrap_or_else(|_| panic!("no wrong answers for {}", e.name))
            .map(|f| f.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let expect = text.lines().find_map(|l| l.strip_prefix("//! expect: ")).expect("an expect line").to_string();
            found.push((e.name, file, expect));
        }
    }
    found
}

/// The stubs' rules hold for the course's own files: a reference solution, an untouched stub and every
/// named wrong answer use only what their exercise allows (a wrong answer must fail for its mistake, not
/// for a rule) — and calling the finished operation instead is refused, for every exercise that has one.
#[test]
fn the_course_files_keep_the_rules_and_calling_the_finished_operation_is_refused() {
    use anatomy_intake::rules::{check, Verdict};
    let mut files: Vec<(&'static str, PathBuf)> = EXERCISES.iter().map(|e| (e.name, e.solution_file())).collect();
    files.extend(mistakes().into_iter().map(|(name, file, _)| (name, file)));
    for (name, file) in &files {
        let e = find(name).unwrap();
        let text = std::fs::read_to_string(file).unwrap();
        assert_eq!(check(&text, e.uses, e.forbids), Verdict::Allowed, "{}", file.display());
    }
    for e in EXERCISES {
        assert_eq!(check(e.stub, e.uses, e.forbids), Verdict::Allowed, "the stub of {}", e.name);
    }
    let shortcut = project_root().join("tests").join("hostile-class").join("shortcuts");
    for e in EXERCISES.iter().filter(|e| !e.forbids.is_empty()) {
        let text = std::fs::read_to_string(shortcut.join(format!("{}.rs", e.name)))
            .unwrap_or_else(|_| panic!("no shortcut for {} in tests/hostile-class/shortcuts/", e.name));
        let expect = text.lines().find_map(|l| l.strip_prefix("//! expect: ")).expect("an expect line");
        match check(&text, e.uses, e.forbids) {
            Verdict::Refused(r) => assert!(r.message.contains(expect), "{}: {}", e.name, r.message),
            other => panic!("{}: the shortcut was not refused: {other:?}", e.name),
        }
    }
}

#[test]
fn solutions_pass_stubs_are_not_done_wrong_answers_fail_for_their_reason_and_a_broken_file_fails_alone() {
    let stubs = scratch("stubs");
    let mut plan = Vec::new();
    for e in EXERCISES {
        plan.push(Submission { label: format!("solution/{}", e.name), exercise: e, file: e.solution_file() });
        plan.push(Submission { label: format!("stub/{}", e.name), exercise: e, file: stub_file(e).unwrap() });
    }
    let mistakes = mistakes();
    for (name, file, _) in &mistakes {
        let label = format!("mistake/{}", file.strip_prefix(project_root()).unwrap().display());
        plan.push(Submission { label, exercise: find(name).unwrap(), file: file.clone() });
    }
    // A type error in one file, and a file whose function has another signature than the stub's.
    let broken = stubs.join("broken_causal_mask.rs");
    std::fs::write(&broken, "use tch::{Device, Tensor};\npub fn causal_mask(n: i64, device: Device) -> Tensor {\n    let x: i64 = \"one\";\n    todo!()\n}\npub fn masked_softmax(s: &Tensor, m: &Tensor) -> Tensor { todo!() }\n").unwrap();
    plan.push(Submission { label: "broken/type_error".into(), exercise: find("causal_mask").unwrap(), file: broken });
    let renamed = stubs.join("renamed_warmup.rs");
    std::fs::write(&renamed, "pub fn learning_rate(step: u32, d_model: i64, warmup: u64) -> f64 { 0.0 }\n").unwrap();
    plan.push(Submission {
        label: "broken/signature".into(),
        exercise: find("warmup_schedule").unwrap(),
        file: renamed,
    });

    let started = Instant::now();
    let outcomes = grade(&plan).unwrap();
    eprintln!("graded {} files in {:.1} s", plan.len(), started.elapsed().as_secs_f64());
    let by_label: BTreeMap<&str, _> = outcomes.iter().map(|o| (o.label.as_str(), o)).collect();
    let mut problems = Vec::new();
    for e in EXERCISES {
        let solution = by_label[format!("solution/{}", e.name).as_str()];
        if solution.status != Status::Passed {
            problems.push(format!("solution {}: {:?} {}", e.name, solution.status, solution.message));
        }
        let stub = by_label[format!("stub/{}", e.name).as_str()];
        if stub.status != Status::NotDone || !stub.message.starts_with("not done yet") {
            problems.push(format!("stub {}: {:?} {}", e.name, stub.status, stub.message));
        }
    }
    for (_, file, expect) in &mistakes {
        let label = format!("mistake/{}", file.strip_prefix(project_root()).unwrap().display());
        let o = by_label[label.as_str()];
        if o.status != Status::Failed || !o.message.contains(expect.as_str()) {
            problems.push(format!("{label}: expected a failure saying {expect:?}, got {:?}: {}", o.status, o.message));
        }
        // Counted by the class report under the wrong answer's own name, unless the file says the checks
        // have no name for it (`//! mistake: unnamed`).
        let text = std::fs::read_to_string(file).unwrap();
        let stem = file.file_stem().unwrap().to_string_lossy().to_string();
        let id = text.lines().find_map(|l| l.strip_prefix("//! mistake: ")).map(String::from).unwrap_or(stem);
        if o.mistake.as_deref() != Some(id.as_str()) {
            problems.push(format!("{label}: expected the mistake id {id:?}, got {:?}: {}", o.mistake, o.message));
        }
    }
    let named = anatomy_checks::mistakes::NAMED.len();
    let files =
        mistakes.iter().filter(|(_, f, _)| !std::fs::read_to_string(f).unwrap().contains("//! mistake: ")).count();
    assert_eq!(named, files, "every named mistake has its wrong answer in tests/exercise-mistakes/, and back");
    let broken = by_label["broken/type_error"];
    assert_eq!(broken.status, Status::DoesNotCompile, "{}", broken.message);
    assert_eq!(broken.mistake.as_deref(), Some("does_not_compile"));
    for (label, o) in &by_label {
        let not_passed = matches!(o.status, Status::Failed | Status::DoesNotCompile);
        assert_eq!(o.mistake.is_some(), not_passed, "{label}: every failure has an id, nothing else has one");
    }
    assert!(
        broken.message.contains("error[E0308]: mismatched types")
            && broken.message.contains("broken_causal_mask.rs:3:"),
        "the compiler's first error, with file and line: {}",
        broken.message
    );
    let renamed = by_label["broken/signature"];
    assert_eq!(renamed.status, Status::DoesNotCompile, "{}", renamed.message);
    assert!(renamed.message.contains("no longer have the stub's names or types"), "{}", renamed.message);
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// A learner's folder whose files attack the grader's isolation, checked as a learner checks them (no
/// sandbox, the same probe and judge): a `feed_forward` that forges frames for a wrong `layer_norm`, an
/// `embeddings` that leaves a thread drawing random numbers, a `sinusoidal_positions` that sets an abort on
/// the next panic beside an untouched stub, a negated view, a shape that changes on the second call and an
/// answer over one frame. Each costs only its own exercise; every other file passes.
#[test]
fn check_keeps_every_exercise_in_a_process_of_its_own_and_reads_values() {
    let dir = scratch("isolation");
    for e in EXERCISES {
        std::fs::copy(e.solution_file(), dir.join(format!("{}.rs", e.name))).unwrap();
    }
    let hostile = project_root().join("tests/hostile-class");
    let files = [
        ("crossforge.feed_forward", "feed_forward", "failed", "expected shape [2, 5, 16], got [2, 6, 8]"),
        ("crossforge.layer_norm", "layer_norm", "failed", "the variance is the unbiased one"),
        ("drawer.embeddings", "embeddings", "passed", "passed"),
        ("globals.sinusoidal_positions", "sinusoidal_positions", "passed", "passed"),
        ("globals.warmup_schedule", "warmup_schedule", "not_done", "not done yet"),
        ("negview.classifier_head", "classifier_head", "failed", "logits: differs from the expected values"),
        ("shapes.mean_pooling", "mean_pooling", "failed", "expected shape [1, 8], got [8]"),
        ("giant.shift_right", "shift_right", "failed", "over the 8 MiB the grader reads of one answer"),
    ];
    for (file, exercise, _, _) in files {
        std::fs::copy(hostile.join(format!("{file}.rs")), dir.join(format!("{exercise}.rs"))).unwrap();
    }
    let (code, out, err) = anatomy(&dir, &["exercises", "check", "--json"]);
    assert_eq!(code, Some(1), "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let of = |name: &str| report["exercises"].as_array().unwrap().iter().find(|e| e["name"] == name).unwrap().clone();
    for (file, exercise, status, words) in files {
        let e = of(exercise);
        assert_eq!(e["status"], status, "{file}: {e}");
        assert!(e["message"].as_str().unwrap().contains(words), "{file}: {e}");
    }
    for e in EXERCISES.iter().filter(|e| !files.iter().any(|f| f.1 == e.name)) {
        assert_eq!(of(e.name)["status"], "passed", "{}: {}", e.name, of(e.name));
    }
}

fn anatomy(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_anatomy")).args(args).env("ANATOMY_EXERCISES_DIR", dir).output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn list_check_reset_and_the_solution_gate() {
    let dir = scratch("cli");
    // A fresh folder gets the stubs; nothing is done.
    let (code, out, _) = anatomy(&dir, &["exercises", "list"]);
    assert_eq!(code, Some(0));
    assert!(out.contains(&format!("0 of {} done", EXERCISES.len())), "{out}");
    assert_eq!(std::fs::read_to_string(dir.join("cross_attention.rs")).unwrap(), find("cross_attention").unwrap().stub);
    assert!(out.contains("cross_attention") && out.contains("(the chapter's homework)"), "{out}");

    // The solution stays closed before the exercise passes.
    let (code, _, err) = anatomy(&dir, &["exercises", "solution", "layer_norm"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("has not passed yet"), "{err}");

    // Solve one, break another: check grades them apart, exit 1 because not all passed.
    std::fs::copy(find("layer_norm").unwrap().solution_file(), dir.join("layer_norm.rs")).unwrap();
    std::fs::write(dir.join("feed_forward.rs"), "pub fn feed_forward( this is not Rust").unwrap();
    let (code, out, _) = anatomy(&dir, &["exercises", "check", "--json"]);
    assert_eq!(code, Some(1));
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let status = |name: &str| {
        report["exercises"].as_array().unwrap().iter().find(|e| e["name"] == name).unwrap()["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!((status("layer_norm").as_str(), status("feed_forward").as_str()), ("passed", "does_not_compile"));
    assert_eq!(status("scaled_dot_product"), "not_done");
    assert_eq!(report["passed"], 1);

    let (_, out, _) = anatomy(&dir, &["exercises", "list"]);
    let line = |name: &str| out.lines().find(|l| l.contains(&format!(" {name} "))).unwrap().to_string();
    assert!(line("layer_norm").contains("done") && line("layer_norm").starts_with('✓'), "{out}");
    assert!(line("feed_forward").contains("failing"), "{out}");
    assert!(line("embeddings").contains("not done"), "{out}");

    // A shortcut to the finished operation is a failed check that names it, file and line, as the
    // instructor's grader would.
    let shortcut = project_root().join("tests/hostile-class/shortcuts/label_smoothed_loss.rs");
    std::fs::copy(shortcut, dir.join("label_smoothed_loss.rs")).unwrap();
    let (code, out, _) = anatomy(&dir, &["exercises", "check", "label_smoothed_loss"]);
    assert_eq!(code, Some(1));
    let line = out.lines().next().unwrap();
    assert!(line.starts_with("✗ label_smoothed_loss"), "{out}");
    assert!(
        line.contains("label_smoothed_loss.rs:6: uses `cross_entropy_loss`, libtorch's finished cross-entropy"),
        "{out}"
    );

    let (code, out, _) = anatomy(&dir, &["exercises", "solution", "layer_norm"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out.trim_end(),
        std::fs::read_to_string(find("layer_norm").unwrap().solution_file()).unwrap().trim_end()
    );

    // Reset brings the stub back and forgets the progress.
    let (code, _, _) = anatomy(&dir, &["exercises", "reset", "layer_norm"]);
    assert_eq!(code, Some(0));
    assert_eq!(std::fs::read_to_string(dir.join("layer_norm.rs")).unwrap(), find("layer_norm").unwrap().stub);
    let (_, out, _) = anatomy(&dir, &["exercises", "list"]);
    assert!(out.contains(&format!("0 of {} done", EXERCISES.len())), "{out}");
    let (code, _, err) = anatomy(&dir, &["exercises", "reset", "no_such"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("choose one of scaled_dot_product, attention_head"), "{err}");
}

#[test]
fn files_past_the_graders_bounds_fail_alone_with_one_line_that_names_the_limit() {
    let dir = scratch("bounds");
    anatomy(&dir, &["exercises", "list"]);
    let hostile = project_root().join("tests/hostile-class");
    for e in ["warmup_schedule", "causal_mask", "shift_right", "mean_pooling"] {
        std::fs::copy(hostile.join(format!("deep.{e}.rs")), dir.join(format!("{e}.rs"))).unwrap();
    }
    std::fs::copy(find("layer_norm").unwrap().solution_file(), dir.join("layer_norm.rs")).unwrap();
    let (code, out, err) = anatomy(&dir, &["exercises", "check", "--json"]);
    assert_eq!(code, Some(1), "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let of = |name: &str| report["exercises"].as_array().unwrap().iter().find(|e| e["name"] == name).unwrap().clone();
    assert_eq!(of("layer_norm")["status"], "passed");
    for (e, limit) in [
        ("warmup_schedule", "more than 64 levels deep"),
        ("causal_mask", "more than 64 levels deep"),
        ("shift_right", "16384 tokens"),
        ("mean_pooling", "16384 tokens"),
    ] {
        let (status, message) = (of(e)["status"].clone(), of(e)["message"].as_str().unwrap_or_default().to_string());
        assert_eq!(status, "failed", "{e}: {message}");
        assert!(message.contains(limit) && !message.contains('\n'), "{e}: {message}");
    }
    let (code, out, _) = anatomy(&dir, &["exercises", "check", "warmup_schedule"]);
    assert_eq!(code, Some(1));
    let line = out.lines().next().unwrap();
    assert!(line.starts_with("✗ warmup_schedule") && line.contains("warmup_schedule.rs:4: nests brackets"), "{out}");
}

#[test]
fn a_learner_who_makes_the_same_mistake_again_is_told_how_often_and_which_hint_to_read() {
    let dir = scratch("repeats");
    // A progress file from before mistakes were counted: a bare status per exercise, still read.
    std::fs::write(dir.join(".progress.json"), "{\"layer_norm\": \"failed\", \"causal_mask\": \"passed\"}\n").unwrap();
    let (_, out, _) = anatomy(&dir, &["exercises", "list"]);
    assert!(out.contains(&format!("1 of {} done", EXERCISES.len())), "{out}");
    let wrong = std::fs::read_to_string(project_root().join("tests/exercise-mistakes/layer_norm/unbiased_variance.rs"))
        .unwrap();
    let levels = find("layer_norm").unwrap().hint_levels().len();
    let mut said = Vec::new();
    // Three attempts, each a new version of the file with the same mistake; the first is checked twice
    // unchanged, which is still one attempt.
    for attempt in 0..3 {
        std::fs::write(dir.join("layer_norm.rs"), format!("{wrong}\n// attempt {attempt}\n")).unwrap();
        let (code, out, _) = anatomy(&dir, &["exercises", "check", "layer_norm"]);
        assert_eq!(code, Some(1), "{out}");
        said.push(out.lines().find(|l| l.contains("again:")).map(|l| l.trim().to_string()));
        if attempt == 0 {
            let (_, out, _) = anatomy(&dir, &["exercises", "check", "layer_norm"]);
            assert!(!out.contains("again:"), "the same file checked again is not a new attempt: {out}");
        }
    }
    let (_, out, _) = anatomy(&dir, &["exercises", "check", "layer_norm"]);
    assert!(out.contains("again: 2 times before"), "checked unchanged, the third attempt says the same: {out}");
    assert_eq!(said[0], None, "the first time is not a repeat");
    let second = said[1].as_deref().unwrap_or_default();
    assert!(second.starts_with("`unbiased_variance` again: once before"), "{said:?}");
    assert!(second.contains(&format!("Read hint 2 of {levels} in ")), "{said:?}");
    assert!(
        said[2].as_deref().is_some_and(|l| l.contains("2 times before") && l.contains(&format!("hint 3 of {levels}"))),
        "{said:?}"
    );
    let progress: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".progress.json")).unwrap()).unwrap();
    assert_eq!(progress["layer_norm"]["mistakes"]["unbiased_variance"], 3);
    assert_eq!(progress["causal_mask"]["status"], "passed", "the old entries are kept, in the new form");
    // Another mistake, then the right answer: only named mistakes made before count.
    std::fs::copy(
        project_root().join("tests/exercise-mistakes/layer_norm/no_scale_and_shift.rs"),
        dir.join("layer_norm.rs"),
    )
    .unwrap();
    let (_, out, _) = anatomy(&dir, &["exercises", "check", "layer_norm"]);
    assert!(!out.contains("again:"), "{out}");
    std::fs::copy(find("layer_norm").unwrap().solution_file(), dir.join("layer_norm.rs")).unwrap();
    let (code, out, _) = anatomy(&dir, &["exercises", "check", "layer_norm"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("again:"), "{out}");
}

#[test]
fn the_instructors_table_is_the_registry() {
    let (_, table, _) = anatomy(&scratch("table"), &["exercises", "table"]);
    let readme = std::fs::read_to_string(project_root().join("exercises").join("README.md")).unwrap();
    assert!(
        readme.contains(&table),
        "exercises/README.md's table differs from `cargo anatomy exercises table`:\n{table}"
    );
    assert_eq!(table.lines().count(), 2 + EXERCISES.len());
}

/// No document says how many exercises there are or what they are worth in all, in words or in figures:
/// such a count went stale once ("Seventeen exercises" above a table of eighteen), and adding an exercise
/// must touch only its own files (exercises/README.md, "Adding an exercise"). The table is generated, and
/// the handout reads the count from it.
#[test]
fn no_document_counts_the_exercises() {
    const WORDS: [&str; 31] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "twenty-one",
        "twenty-two",
        "twenty-three",
        "twenty-four",
        "twenty-five",
        "twenty-six",
        "twenty-seven",
        "twenty-eight",
        "twenty-nine",
        "thirty",
    ];
    let (n, full) = (EXERCISES.len(), EXERCISES.iter().map(|e| e.points).sum::<f64>());
    let word = WORDS[n];
    let said = [
        format!("{word} exercises"),
        format!("{n} exercises"),
        format!("the {word} "),
        format!("all {word} "),
        format!("of {n} done"),
        format!("of {full} "),
        format!("worth {full}"),
        format!("{full} in all"),
        format!("/{full}"),
    ];
    let root = project_root();
    let mut docs = vec![root.join("README.md"), root.join("exercises/README.md"), root.join("scripts/handout.sh")];
    for dir in ["docs", "exercises/platforms"] {
        docs.extend(std::fs::read_dir(root.join(dir)).unwrap().map(|f| f.unwrap().path()));
    }
    let mut found = Vec::new();
    for doc in docs.iter().filter(|d| d.extension().is_some_and(|x| x == "md" || x == "sh")) {
        let text = std::fs::read_to_string(doc).unwrap().to_lowercase().replace('\n', " ");
        found.extend(said.iter().filter(|s| text.contains(s.as_str())).map(|s| format!("{}: {s:?}", doc.display())));
    }
    assert!(found.is_empty(), "a count of the exercises in prose:\n{}", found.join("\n"));
}

/// Waits for a line containing `needle`; returns everything read so far.
fn wait_for(lines: &mpsc::Receiver<String>, seen: &mut String, needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !seen.contains(needle) {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                seen.push_str(&line);
                seen.push('\n');
            }
            Err(_) => panic!("the watch mode never said {needle:?}; it said:\n{seen}"),
        }
    }
}

/// `anatomy exercises watch` on the files in `dir`, keys through a pipe; its output arrives line by line.
fn start_watch(dir: &Path, options: &[&str]) -> (std::process::Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["exercises", "watch"])
        .args(options)
        .env("ANATOMY_EXERCISES_DIR", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

#[test]
fn the_watch_mode_regrades_on_save_moves_on_and_answers_keys() {
    let dir = scratch("watch");
    let (mut child, rx) = start_watch(&dir, &[]);
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = String::new();
    // File events where the system gives them (they may be unavailable, e.g. out of inotify instances: then
    // polling alone notices the saves, as the next test checks).
    wait_for(&rx, &mut seen, "cargo anatomy exercises watch (");
    wait_for(&rx, &mut seen, "exercise 1 scaled_dot_product");
    wait_for(&rx, &mut seen, "not done");

    // A wrong save: failed, with the mistake's words.
    let mistake = project_root().join("tests/exercise-mistakes/scaled_dot_product/no_scaling.rs");
    std::fs::copy(mistake, dir.join("scaled_dot_product.rs")).unwrap();
    wait_for(&rx, &mut seen, "are not scaled");

    // A file nested past what the grader reads: one line that names the limit, and the watch goes on.
    let deep = std::fs::read_to_string(project_root().join("tests/hostile-class/deep.warmup_schedule.rs")).unwrap();
    let deep = deep.replace("pub fn learning_rate(step: u64, d_model: i64, warmup: u64) -> f64", "pub fn f() -> f64");
    std::fs::write(dir.join("scaled_dot_product.rs"), deep).unwrap();
    wait_for(&rx, &mut seen, "more than 64 levels deep");

    // A view whose value is the answer negated while its memory holds the answer: the value is read.
    let negated = "use tch::{Kind, Tensor};\n\
                   pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {\n\
                   let d = *query.size().last().unwrap() as f64;\n\
                   let weights = (query.bmm(&key.transpose(1, 2)) / d.sqrt()).softmax(-1, Kind::Float);\n\
                   (weights.bmm(value).internal_neg_view(), weights)\n}\n";
    std::fs::write(dir.join("scaled_dot_product.rs"), negated).unwrap();
    wait_for(&rx, &mut seen, "output: differs from the expected values");
    // An answer larger than one frame: the limit is named, and the watch goes on.
    let giant = "use tch::{Kind, Tensor};\n\
                 pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {\n\
                 let big = Tensor::zeros([3, 1 << 20], (Kind::Double, query.device()));\n\
                 (big.shallow_clone(), big)\n}\n";
    std::fs::write(dir.join("scaled_dot_product.rs"), giant).unwrap();
    wait_for(&rx, &mut seen, "over the 8 MiB the grader reads of one answer");

    // The right one: passed, then the next exercise.
    let saved = Instant::now();
    std::fs::copy(find("scaled_dot_product").unwrap().solution_file(), dir.join("scaled_dot_product.rs")).unwrap();
    wait_for(&rx, &mut seen, "next: exercise 2");
    eprintln!("save → passed verdict: {:.1} s", saved.elapsed().as_secs_f64());
    assert!(seen.contains("✓ exercise 1 scaled_dot_product"), "{seen}");
    assert!(seen.contains("cargo anatomy exercises solution scaled_dot_product"), "{seen}");
    wait_for(&rx, &mut seen, "exercise 2 attention_head");

    writeln!(stdin, "h").unwrap();
    let hints = find("attention_head").unwrap().hint_levels().len();
    wait_for(&rx, &mut seen, &format!("hint 1/{hints}:"));
    writeln!(stdin, "l").unwrap();
    wait_for(&rx, &mut seen, &format!("1 of {} done", EXERCISES.len()));
    std::fs::write(dir.join("attention_head.rs"), "// scribbles").unwrap();
    wait_for(&rx, &mut seen, "does not compile");
    writeln!(stdin, "r").unwrap();
    wait_for(&rx, &mut seen, "attention_head.rs is the untouched stub again");
    assert_eq!(std::fs::read_to_string(dir.join("attention_head.rs")).unwrap(), find("attention_head").unwrap().stub);
    writeln!(stdin, "q").unwrap();
    wait_for(&rx, &mut seen, "bye");
    assert!(child.wait().unwrap().success());
    for line in seen.lines().filter(|l| l.contains("graded in")) {
        eprintln!("{line}");
    }
}

#[test]
fn the_watch_mode_notices_saves_by_polling_alone() {
    let dir = scratch("poll");
    let (mut child, rx) = start_watch(&dir, &["--poll"]);
    let mut seen = String::new();
    wait_for(&rx, &mut seen, "(polling twice a second)");
    wait_for(&rx, &mut seen, "not done");
    std::fs::copy(find("scaled_dot_product").unwrap().solution_file(), dir.join("scaled_dot_product.rs")).unwrap();
    wait_for(&rx, &mut seen, "next: exercise 2");
    drop(child.stdin.take()); // end of input quits
    wait_for(&rx, &mut seen, "bye");
    assert!(child.wait().unwrap().success());
}

/// The learner's own loop: what their code printed comes under the verdict (escaped, never their colours
/// or cursor moves), and a panic says where in their file — its own line, or for a LibTorch error the line
/// of their call that raised it.
#[test]
fn check_shows_what_the_code_printed_and_where_it_panicked() {
    let dir = scratch("printed");
    let file = dir.join("scaled_dot_product.rs");
    let prints = "use tch::{Kind, Tensor};\n\
                  pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {\n\
                  println!(\"query {:?}\", query.size());\n\
                  eprintln!(\"\\x1b[31mkey\\x1b[0m {:?}\", key.size());\n\
                  let d = *query.size().last().unwrap() as f64;\n\
                  let weights = (query.bmm(&key.transpose(1, 2)) / d.sqrt()).softmax(-1, Kind::Float);\n\
                  (weights.bmm(value), weights)\n}\n";
    std::fs::write(&file, prints).unwrap();
    let (code, out, _) = anatomy(&dir, &["exercises", "check", "scaled_dot_product"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("  your code printed:\n  │ query ["), "{out}");
    assert!(out.contains("  │ \\u{1b}[31mkey\\u{1b}[0m ["), "the escape sequence is shown, not obeyed: {out}");
    assert!(!out.contains('\u{1b}'), "{out:?}");

    // An index past the end: the panic's own line and column, in the learner's file.
    let index = prints.replace("let d = *query", "let v = vec![1, 2, 3];\nlet _x = v[v.len()];\nlet d = *query");
    std::fs::write(&file, index).unwrap();
    let (code, out, _) = anatomy(&dir, &["exercises", "check", "scaled_dot_product"]);
    assert_eq!(code, Some(1), "{out}");
    let at = format!("index out of bounds: the len is 3 but the index is 3 (at {}:6:", file.display());
    assert!(out.contains(&at), "expected {at:?} in:\n{out}");
    // A LibTorch error inside tch: the learner's call that raised it.
    let no_transpose = prints.replace("query.bmm(&key.transpose(1, 2))", "query.bmm(key)");
    std::fs::write(&file, no_transpose).unwrap();
    let (_, out, _) = anatomy(&dir, &["exercises", "check", "scaled_dot_product"]);
    let at = format!("(raised by the call at {}:6:", file.display());
    assert!(out.contains("LibTorch: ") && out.contains(&at), "expected {at:?} in:\n{out}");
    // A long print is cut, saying how much.
    let long = prints.replace("println!(\"query {:?}\", query.size());", "for i in 0..500 { println!(\"line {i}\"); }");
    std::fs::write(&file, long).unwrap();
    let (_, out, _) = anatomy(&dir, &["exercises", "check", "scaled_dot_product"]);
    assert!(out.contains("  │ line 39\n  │ … (") && !out.contains("line 40\n"), "{out}");
    assert!(out.contains("more bytes not shown, of "), "{out}");
}

/// The pids of `pid`'s descendants that are alive (not yet ended, zombies aside).
fn live_descendants(pid: u32) -> Vec<u32> {
    let stat = |p: &str| std::fs::read_to_string(format!("/proc/{p}/stat")).ok();
    let mut all: Vec<(u32, u32, char)> = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(text) = name.parse::<u32>().ok().and_then(|_| stat(&name)) else { continue };
        // pid (comm) state ppid …: the comm may hold spaces, so read after its closing parenthesis.
        let rest: Vec<&str> = text[text.rfind(')').unwrap() + 2..].split(' ').collect();
        all.push((name.parse().unwrap(), rest[1].parse().unwrap(), rest[0].chars().next().unwrap()));
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(all.iter().filter(|(_, pp, _)| *pp == parent).map(|(p, _, _)| *p));
        i += 1;
    }
    found.into_iter().skip(1).filter(|p| all.iter().any(|(q, _, s)| q == p && *s != 'Z')).collect()
}

/// Moving through the course as in rustlings: `watch NAME` starts anywhere (the homework too), a line
/// naming an exercise or its number makes it the current one, a running grade says so, and `q` during an
/// endless loop ends the watch within a second, its compiler and probe gone.
#[test]
fn the_watch_mode_goes_to_any_exercise_and_q_stops_a_grade_at_once() {
    let dir = scratch("choose");
    let (mut child, rx) = start_watch(&dir, &["cross_attention"]);
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = String::new();
    wait_for(&rx, &mut seen, "grading cross_attention …");
    wait_for(&rx, &mut seen, "exercise 9 cross_attention");
    writeln!(stdin, "l").unwrap();
    wait_for(&rx, &mut seen, "▶ ·  9. cross_attention");
    wait_for(&rx, &mut seen, "type an exercise's number, then Enter, to work on it");
    writeln!(stdin, "1").unwrap();
    wait_for(&rx, &mut seen, "exercise 1 — scaled_dot_product");
    wait_for(&rx, &mut seen, "exercise 1 scaled_dot_product");
    writeln!(stdin, "attention_head").unwrap();
    wait_for(&rx, &mut seen, "exercise 2 attention_head");
    writeln!(stdin, "99").unwrap();
    wait_for(&rx, &mut seen, &format!("there is no exercise 99: the list numbers them 1 to {}", EXERCISES.len()));

    // An endless loop: the grade runs; q ends the watch at once, and nothing it started runs on.
    let endless = "use tch::Tensor;\npub use transformer_anatomy::exercises::support::Projections;\n\
                   pub fn attention_head(hidden_state: &Tensor, projections: &Projections) -> Tensor {\n\
                   let mut n = 0u64;\nloop { n = std::hint::black_box(n + 1); if n == 0 { break; } }\n\
                   hidden_state.shallow_clone()\n}\n";
    std::fs::write(dir.join("attention_head.rs"), endless).unwrap();
    wait_for(&rx, &mut seen, "grading attention_head …");
    std::thread::sleep(Duration::from_secs(3));
    let running = live_descendants(child.id());
    assert!(!running.is_empty(), "the grade runs a compiler or a probe");
    let asked = Instant::now();
    writeln!(stdin, "q").unwrap();
    wait_for(&rx, &mut seen, "stopped grading attention_head; bye");
    assert!(child.wait().unwrap().success());
    let answered = asked.elapsed();
    eprintln!("q during a grade → ended: {:.3} s", answered.as_secs_f64());
    assert!(answered < Duration::from_secs(1), "{answered:?}");
    // SIGKILL is delivered at once; the kernel ends a process within moments: a second is more than enough.
    let alive = |p: &u32| {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        stat.rfind(')')
            .is_some_and(|i| !stat[i + 2..].starts_with('Z'))
            .then(|| stat[..stat.rfind(')').unwrap() + 1].to_string())
    };
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut left: Vec<String> = running.iter().filter_map(alive).collect();
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        left = running.iter().filter_map(alive).collect();
    }
    assert!(left.is_empty(), "still running a second after q: {left:?}");
}
