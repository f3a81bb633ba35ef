//! exercises/README.md's "Adding an exercise", followed step by step in a scratch copy of the project with
//! a toy exercise (`toy_double`: twice its input): the declaration, the stub, the hints, the solution, the
//! check with its named mistake, a wrong answer. The copy is then built on its own, its declaration check
//! (`crates/checks/tests/declared.rs`) passes, and its grader grades the toy's solution "passed", its stub
//! "not done" and the wrong answer "failed" under the mistake's own id. If a step the recipe names is not
//! enough, or one it does not name is needed, this fails.
#![cfg(anatomy_solutions)]

use std::path::Path;
use std::process::Command;

use anatomy_grade::grading::project_root;

/// Writes `text` into `file` of the copy, after `anchor` (which must be there once).
fn insert_after(file: &Path, anchor: &str, text: &str) {
    let old = std::fs::read_to_string(file).unwrap();
    assert_eq!(old.matches(anchor).count(), 1, "{}: {anchor:?}", file.display());
    std::fs::write(file, old.replace(anchor, &format!("{anchor}{text}"))).unwrap();
}

#[test]
fn the_recipe_for_a_new_exercise_adds_one_that_is_graded() {
    let root = project_root();
    let copy = std::env::temp_dir().join(format!("anatomy-recipe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&copy);
    // The project's tracked files, as a fresh clone has them; LibTorch and the model where set-up put them.
    let listed = Command::new("git").arg("-C").arg(&root).args(["ls-files", "-z"]).output().unwrap();
    for name in listed.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).unwrap();
        let skip = ["fuzz/", "notebooks/", "chapters/", "tests/hostile-class/", "tests/similarity-class/"];
        if skip.iter().any(|s| name.starts_with(s)) || !root.join(name).is_file() {
            continue;
        }
        std::fs::create_dir_all(copy.join(name).parent().unwrap()).unwrap();
        std::fs::copy(root.join(name), copy.join(name)).unwrap();
    }
    for link in [".deps", "models"] {
        std::os::unix::fs::symlink(root.join(link), copy.join(link)).unwrap();
    }

    // 1. The declaration: one entry, here after the last exercise.
    insert_after(
        &copy.join("crates/course/src/lib.rs"),
        "                uses: [], forbids: [], check: encoder::MEAN_POOLING,\n            },\n",
        "            toy_double {\n                chapter: \"00-overview\", homework: false, points: 3,\n                \
         functions: [toy_double(x)],\n                summary: \"twice its input\",\n                \
         uses: [], forbids: [], check: encoder::TOY_DOUBLE,\n            },\n",
    );
    // 2. The stub.
    std::fs::write(
        copy.join("crates/course/src/stubs/toy_double.rs"),
        "//! A toy exercise: return twice `x`, whatever its shape.\n#![allow(unused_variables)]\nuse tch::Tensor;\n\n\
         pub fn toy_double(x: &Tensor) -> Tensor {\n    todo!(\"twice x\")\n}\n",
    )
    .unwrap();
    // 3. The hints and the solution.
    std::fs::write(copy.join("exercises/hints/toy_double.md"), "# Hints: toy\n\n1. Multiply by 2.\n").unwrap();
    std::fs::write(
        copy.join("solutions/toy_double.rs"),
        "use tch::Tensor;\n\npub fn toy_double(x: &Tensor) -> Tensor {\n    x * 2.0\n}\n",
    )
    .unwrap();
    // 4. The check, with its named mistake, beside the other encoder checks.
    let check = "\n/// The named mistakes of `toy_double`.\npub const TOY_DOUBLE: &[Mistake] = &[TRIPLED];\n\
                 const TRIPLED: Mistake = Mistake(\"tripled\");\n\n/// `toy_double(x)`: twice x.\n\
                 pub fn toy_double(f: &dyn Fn(&Tensor) -> Tensor) -> CheckResult {\n    \
                 let x = randn(&[3, 4]);\n    \
                 let got = call(|| f(&x), &[Returned::floats(\"doubled\", &[3, 4])], &[])?;\n    \
                 expect_close_or_name(\"doubled\", &got, &(&x * 2.0), 1e-6, &[(&x * 3.0, named(TRIPLED, \"tripled\"))])\n}\n";
    let encoder = copy.join("crates/checks/src/checks/encoder.rs");
    std::fs::write(&encoder, std::fs::read_to_string(&encoder).unwrap() + check).unwrap();
    // 5. A wrong answer, named after its mistake.
    std::fs::create_dir_all(copy.join("tests/exercise-mistakes/toy_double")).unwrap();
    std::fs::write(
        copy.join("tests/exercise-mistakes/toy_double/tripled.rs"),
        "//! expect: tripled\nuse tch::Tensor;\n\npub fn toy_double(x: &Tensor) -> Tensor {\n    x * 3.0\n}\n",
    )
    .unwrap();

    // The copy builds on its own (its own target folder, its dependencies linked from this project's build,
    // as the handout's are), its declaration check passes, and its grader grades the toy. No `-p`: cargo
    // chooses features for the packages it is given, and with the whole workspace it chooses this project's
    // (crates/cli/Cargo.toml), so that the linked dependencies are found fresh instead of compiled again.
    let grading = "use anatomy_grade::grading::{grade, stub_file, Submission};\nuse anatomy_course::{find, Status};\n\n\
                   #[test]\nfn the_toy_is_graded() {\n    let e = find(\"toy_double\").unwrap();\n    \
                   let root = anatomy_course::project_root();\n    \
                   let files = [root.join(\"solutions/toy_double.rs\"), stub_file(e).unwrap(), \
                   root.join(\"tests/exercise-mistakes/toy_double/tripled.rs\")];\n    \
                   let plan: Vec<Submission> = files.iter().enumerate().map(|(i, f)| Submission { label: i.to_string(), \
                   exercise: e, file: f.clone() }).collect();\n    let o = grade(&plan).unwrap();\n    \
                   assert_eq!(o[0].status, Status::Passed, \"{}\", o[0].message);\n    \
                   assert_eq!(o[1].status, Status::NotDone, \"{}\", o[1].message);\n    \
                   assert_eq!((o[2].status, o[2].mistake.as_deref()), (Status::Failed, Some(\"tripled\")), \"{}\", o[2].message);\n    \
                   assert_eq!(e.points, 3.0);\n}\n";
    std::fs::create_dir_all(copy.join("crates/grade/tests")).unwrap();
    std::fs::write(copy.join("crates/grade/tests/toy.rs"), grading).unwrap();
    let target = root.join("target/recipe-build");
    link_dependencies(&root.join("target/debug"), &target.join("debug"));
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["test", "--quiet", "--test", "declared", "--test", "toy"])
        .current_dir(&copy)
        .env("CARGO_TARGET_DIR", &target)
        .env("LIBTORCH", root.join(".deps/libtorch/torch"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the copy with the toy exercise:\n{text}");
    assert_eq!(text.matches("test result: ok. 1 passed").count(), 2, "{text}");
    let _ = std::fs::remove_dir_all(&copy);
}

/// The copy's dependencies are this project's, built the same way: its target folder starts from hard
/// links to what is built here (as `make handout`'s does), so that cargo compiles only the copy's own
/// packages. Those are never linked: cargo may give a package the same file name wherever it lives, and
/// the copy's build would then write over this project's files through the links.
fn link_dependencies(built: &Path, target: &Path) {
    if target.is_dir() {
        return;
    }
    for part in ["deps", "build", ".fingerprint"] {
        std::fs::create_dir_all(target.join(part)).unwrap();
        for entry in std::fs::read_dir(built.join(part)).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            let bare = name.trim_start_matches("lib");
            let own = bare.starts_with("anatomy") || bare.starts_with("transformer");
            // Test binaries of this project carry their own names: only libraries and build outputs.
            if own || (part == "deps" && !name.starts_with("lib")) {
                continue;
            }
            let _ = Command::new("cp").arg("-al").arg(entry.path()).arg(target.join(part)).status();
        }
    }
}
