//! exercises/README.md's "Adding an exercise", followed step by step in a scratch copy of the project with
//! a toy exercise (`toy_double`: twice its input, placed after `feed_forward`, so that every exercise after
//! it moves down one): `anatomy exercises new` writes its table in the declaration
//! (`crates/course/exercises.toml`), stub, solution, hints, check, two wrong answers and, since it forbids
//! the finished normalisations, its shortcut; each is then written as an author would (the solution, the
//! check's body, the wrong answers, the shortcut, the hints), and `exercises table --write` regenerates the
//! README's table. The copy, built on its own, must then pass every test that counts or lists the exercises
//! — the declaration check, each check against its solution, stub and wrong answers (in-process), the
//! rules and the shortcuts, the list, the table and the documents' counts — and grade the toy's solution
//! "passed", its stub "not done" and a wrong answer "failed" under the mistake's own id; and no file but
//! the toy's own, its table and that generated table may differ from this project's. If a step the recipe
//! names is not enough, or one it does not name is needed, this fails.
#![cfg(anatomy_solutions)]

#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hasher};
use std::path::Path;
use std::process::Command;

use anatomy_course::project_root;

/// Replaces the one `old` of `file` in the copy with `new`.
fn replace(file: &Path, old: &str, new: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    assert_eq!(text.matches(old).count(), 1, "{}: {old:?}", file.display());
    std::fs::write(file, text.replace(old, new)).unwrap();
}

/// The project's tracked files, as a fresh clone has them (less what no step here reads); LibTorch and
/// the model where set-up put them. Returns the files copied, each with a hash of what was copied.
fn copy_project(root: &Path, copy: &Path) -> BTreeMap<String, u64> {
    let listed = Command::new("git").arg("-C").arg(root).args(["ls-files", "-z"]).output().unwrap();
    let mut copied = BTreeMap::new();
    for name in listed.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).unwrap();
        let skip = ["fuzz/", "notebooks/", "tests/similarity-class/"];
        let hostile = name.starts_with("tests/hostile-class/") && !name.starts_with("tests/hostile-class/shortcuts/");
        if hostile || skip.iter().any(|s| name.starts_with(s)) || !root.join(name).is_file() {
            continue;
        }
        std::fs::create_dir_all(copy.join(name).parent().unwrap()).unwrap();
        std::fs::copy(root.join(name), copy.join(name)).unwrap();
        copied.insert(name.to_string(), hash(&copy.join(name)));
    }
    for link in [".deps", "models"] {
        std::os::unix::fs::symlink(root.join(link), copy.join(link)).unwrap();
    }
    copied
}

/// The author's part: what `anatomy exercises new` leaves to write, written for the toy.
fn write_the_toy(copy: &Path) {
    let (doubled, wrong) =
        ("todo!(\"the reference solution of toy_double\")", "written out: the reference solution with this mistake\")");
    replace(&copy.join("solutions/toy_double.rs"), doubled, "x * 2.0");
    for (id, body) in [("tripled", "x * 3.0"), ("halved", "x * 0.5")] {
        let file = copy.join(format!("tests/exercise-mistakes/toy_double/{id}.rs"));
        replace(&file, &format!("todo!(\"{id}, {wrong}"), body);
        replace(&file, &format!("the words the check says of {id}"), id);
    }
    replace(&copy.join("exercises/hints/toy_double.md"), "The first hint: where to start", "Multiply");
    let shortcut = "todo!(\"the one call of libtorch's finished normalisation that does the whole exercise\")";
    let normalised = "x.layer_norm([4], None::<Tensor>, None::<Tensor>, 1e-5, false)";
    replace(&copy.join("tests/hostile-class/shortcuts/toy_double.rs"), shortcut, normalised);
    let check = "    let _ = f;\n    Err(\"the check of toy_double is not written yet (crates/checks/src/checks/encoder.rs)\".into())\n";
    let written = "    let x = randn(&[3, 4]);\n    \
                   let got = call(|| f(&x), &[Returned::floats(\"doubled\", &[3, 4])], &[])?;\n    \
                   let known = [(&x * 3.0, named(TRIPLED, \"tripled\")), (&x * 0.5, named(HALVED, \"halved\"))];\n    \
                   expect_close_or_name(\"doubled\", &got, &(&x * 2.0), 1e-6, &known)\n";
    replace(&copy.join("crates/checks/src/checks/encoder.rs"), check, written);
}

/// Runs cargo in the copy (its own target folder, its dependencies linked from this project's build, as
/// the handout's are) and returns its output, failing the test with it when cargo fails. The whole workspace
/// (`--workspace`, or the command's tree through `cargo anatomy`): cargo chooses features for the packages it
/// is given, and with these it chooses this project's (crates/cli/Cargo.toml), so that the linked
/// dependencies are found fresh instead of compiled again.
fn cargo_in(copy: &Path, args: &[&str]) -> String {
    let root = project_root();
    let target = root.join("target/recipe-build");
    anatomy_platforms::handout::link_dependencies(&root.join("target/debug"), &target.join("debug"));
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(args)
        .current_dir(copy)
        .env("CARGO_TARGET_DIR", &target)
        .env("LIBTORCH", root.join(".deps/libtorch/torch"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "cargo {args:?} in the copy with the toy exercise:\n{text}");
    text
}

#[test]
fn the_recipe_for_a_new_exercise_adds_one_that_is_graded_and_touches_nothing_else() {
    let root = project_root();
    let copy = test_dir::TestDir::new("recipe");
    let copied = copy_project(&root, &copy);

    // 1-5. `anatomy exercises new` (this project's binary, told the copy's root), then the author's part.
    let new = Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["exercises", "new", "toy_double", "--after", "feed_forward", "--chapter", "00-overview"])
        .args(["--summary", "twice its input", "--module", "encoder", "--mistakes", "tripled,halved"])
        .args(["--forbids", "norms", "--points", "3", "--root"])
        .arg(&*copy)
        .output()
        .unwrap();
    assert!(new.status.success(), "{}", String::from_utf8_lossy(&new.stderr));
    write_the_toy(&copy);
    // 6. The table, regenerated by the copy's own binary (which knows the toy).
    cargo_in(&copy, &["anatomy", "exercises", "table", "--write"]);

    // Every test that counts or lists the exercises, and the toy graded through the grader.
    std::fs::create_dir_all(copy.join("crates/grade/tests")).unwrap();
    std::fs::write(copy.join("crates/grade/tests/toy.rs"), TOY_GRADED).unwrap();
    let text = cargo_in(
        &copy,
        &["test", "--workspace", "--quiet", "--test", "declared", "--test", "in_process", "--test", "toy"],
    );
    assert_eq!(text.matches("test result: ok.").count(), 3, "{text}");
    let filter = ["list_check_reset", "the_instructors_table", "no_document_counts", "the_course_files_keep_the_rules"];
    let text =
        cargo_in(&copy, &[&["test", "--workspace", "--quiet", "--test", "exercises", "--"][..], &filter].concat());
    assert!(text.contains("test result: ok. 4 passed"), "{text}");

    // Nothing but the toy's own files, its table and the generated table differs from this project's.
    let mut changed = BTreeSet::new();
    for entry in walk(&copy) {
        let name = entry.strip_prefix(&*copy).unwrap().to_string_lossy().to_string();
        let same = copied.get(&name) == Some(&hash(&entry));
        // The test's own grading file, and what building and grading leave (the grader's build, target/).
        let ours = ["crates/grade/tests/toy.rs", "Cargo.lock"].contains(&name.as_str()) || name.starts_with("target/");
        if !same && !ours {
            changed.insert(name);
        }
    }
    let expected = [
        "crates/checks/src/checks/encoder.rs",
        "crates/course/exercises.toml",
        "crates/course/src/stubs/toy_double.rs",
        "exercises/README.md",
        "exercises/hints/toy_double.md",
        "solutions/toy_double.rs",
        "tests/exercise-mistakes/toy_double/halved.rs",
        "tests/exercise-mistakes/toy_double/tripled.rs",
        "tests/hostile-class/shortcuts/toy_double.rs",
    ];
    assert_eq!(changed, expected.iter().map(|s| s.to_string()).collect(), "the files the new exercise touched");
}

/// A hash of a file's bytes.
fn hash(file: &Path) -> u64 {
    let mut hasher = DefaultHasher::new();
    hasher.write(&std::fs::read(file).unwrap());
    hasher.finish()
}

/// Every file under `dir`, not following links (the copy's links to LibTorch and the model).
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            files.extend(walk(&entry.path()));
        } else if kind.is_file() {
            files.push(entry.path());
        }
    }
    files
}

/// The toy graded through the grader: its solution passes, its stub is not done, a wrong answer fails
/// under its mistake's id, and it is worth the points it was declared with.
const TOY_GRADED: &str = r#"use anatomy_grade::grading::{grade, stub_file, Submission};
use anatomy_course::{find, Status};

#[test]
fn the_toy_is_graded() {
    let e = find("toy_double").unwrap();
    let root = anatomy_course::project_root();
    let files = [root.join("solutions/toy_double.rs"), stub_file(e).unwrap(), root.join("tests/exercise-mistakes/toy_double/tripled.rs")];
    let plan: Vec<Submission> = files.iter().enumerate().map(|(i, f)| Submission { label: i.to_string(), exercise: e, file: f.clone() }).collect();
    let o = grade(&plan).unwrap();
    assert_eq!(o[0].status, Status::Passed, "{}", o[0].message);
    assert_eq!(o[1].status, Status::NotDone, "{}", o[1].message);
    assert_eq!((o[2].status, o[2].mistake.as_deref()), (Status::Failed, Some("tripled")), "{}", o[2].message);
    assert_eq!(e.points, 3.0);
}
"#;
