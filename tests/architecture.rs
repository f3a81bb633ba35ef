//! ARCHITECTURE.md is the map a newcomer reads first: every path it names must exist. A name in backticks
//! that looks like a path (it has a `/` or a file extension) is looked up from the project's root, as a
//! reader would. In the students' copy, what instructors keep back (`exercises/kept-back`) may be missing.
#[path = "common/kept_back.rs"]
mod kept_back;
use std::path::Path;

#[test]
fn every_path_architecture_md_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let (kept_back, students_copy) = kept_back::kept_back(root);
    let looks_like_a_path = |t: &str| {
        !t.contains(' ')
            && !t.contains('*')
            && (t.contains('/') || [".rs", ".md", ".py", ".sh", ".toml"].iter().any(|x| t.ends_with(x)))
    };
    let names: Vec<&str> = text.split('`').skip(1).step_by(2).filter(|t| looks_like_a_path(t)).collect();
    assert!(names.len() >= 40, "only {} paths found: {names:?}", names.len());
    let mut missing = Vec::new();
    for name in names {
        let found = [
            "",
            "src",
            "crates/checks/src",
            "crates/grade/src",
            "crates/report/src",
            "crates/tools/src",
            "crates/cli/src",
        ]
        .iter()
        .any(|base| root.join(base).join(name).exists());
        let may_be_missing = students_copy && kept_back.iter().any(|k| name.starts_with(k.as_str()));
        if !found && !may_be_missing {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md names paths that do not exist: {missing:?}");
}

/// Code names the chapter it implements by its file (`chapters/NN-name.md`), and a section of it by its
/// heading in italics right after (`chapters/01-tokenize.md`, *Token embeddings*), never by a step count
/// of its own: every chapter so named must exist, and so must every section, as a heading of that file.
/// The old numbering ("Step 8a", "steps 3 and 11") is gone and may not come back.
#[test]
fn every_chapter_and_section_a_comment_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    for dir in [
        "src",
        "crates/course/src",
        "crates/intake/src",
        "crates/checks/src",
        "crates/tools/src",
        "crates/notebooks/src",
        "crates/grade/src",
        "crates/report/src",
        "crates/class/src",
        "crates/platforms/src",
        "crates/cli/src",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    let (mut named, mut problems) = (0, Vec::new());
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate().filter(|(_, l)| l.trim_start().starts_with("//") || l.contains("// "))
        {
            let shown = format!("{}:{}", file.strip_prefix(root).unwrap().display(), n + 1);
            let comment = &line[line.find("//").unwrap()..];
            // The old numbering: a module's heading or its line in lib.rs naming a step.
            let lower = comment.to_lowercase();
            let numbered = |prefix: &str| {
                lower.strip_prefix(prefix).is_some_and(|r| r.trim_start_matches('s').starts_with(|c: char| c == ' '))
                    && lower[prefix.len()..]
                        .trim_start_matches('s')
                        .trim_start()
                        .starts_with(|c: char| c.is_ascii_digit())
            };
            let heading = numbered("//! # step") || numbered("/// step");
            if heading || (line.trim_start().starts_with("pub mod") && lower.starts_with("// step")) {
                problems.push(format!("{shown}: a step number of its own: {comment}"));
            }
            let mut rest = comment;
            while let Some(at) = rest.find("chapters/") {
                rest = &rest[at..];
                let end = rest.find(".md").map(|e| e + 3).unwrap_or(rest.len());
                let chapter = &rest[..end];
                // A pattern (`chapters/NN-name.md`, `chapters/*.md`) names no chapter.
                let name = chapter.trim_start_matches("chapters/");
                if !(name.starts_with(|c: char| c.is_ascii_digit()) || name.starts_with("homework"))
                    || name.starts_with("NN")
                {
                    rest = &rest[end..];
                    continue;
                }
                named += 1;
                match std::fs::read_to_string(root.join(chapter)) {
                    Err(_) => problems.push(format!("{shown}: no chapter {chapter}")),
                    Ok(body) => {
                        let after = rest[end..].trim_start_matches(['`', ',', ' ']);
                        if let Some(section) = after.strip_prefix('*').and_then(|s| s.split('*').next()) {
                            let heading =
                                body.lines().any(|l| l.starts_with('#') && l.trim_start_matches('#').trim() == section);
                            if !heading {
                                problems.push(format!("{shown}: {chapter} has no section *{section}*"));
                            }
                        }
                    }
                }
                rest = &rest[end..];
            }
        }
    }
    assert!(named >= 20, "only {named} chapter names found in comments");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `scripts/module-edges.py` (in `make test`) holds the invariant "no module imports a module that imports
/// it back". It must see an import however it is written: in `tests/data/module-edges/circle/` the circle
/// runs through a grouped import over several lines and a folder's `mod.rs` (the two ways its first
/// version missed 11 of the exercises crate's 36 edges), and in `no-circle/` a comment, a string and a doc
/// link naming the other module are not imports.
#[test]
fn the_import_checker_finds_a_circle_however_the_import_is_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |fixture: &str| {
        let out = std::process::Command::new("python3")
            .arg(root.join("scripts/module-edges.py"))
            .arg("--crate")
            .arg(format!("fixture={}", root.join("tests/data/module-edges").join(fixture).display()))
            .output()
            .expect("python3 runs scripts/module-edges.py");
        (out.status.code(), String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    assert_eq!(run("circle"), (Some(1), "fixture: a cycle of imports: a → b → a".to_string()));
    assert_eq!(run("no-circle"), (Some(0), "fixture: 1 edges between its top modules, no cycle".to_string()));
    assert_eq!(run("reexport-circle"), (Some(1), "fixture: a cycle of imports: a → b → a".to_string()));
}

/// The short-function rule of the hand-in path (issue 54): the checker measures a function from its `fn`
/// to its closing brace, braces in comments, strings and chars aside, and refuses the first one over 80
/// lines and no other.
#[test]
fn the_function_length_checker_refuses_81_lines_and_allows_80() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("python3")
        .arg(root.join("scripts/module-edges.py"))
        .arg("--long-functions")
        .arg(root.join("tests/data/module-edges/long-function"))
        .output()
        .expect("python3 runs scripts/module-edges.py");
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!((out.status.code(), said.as_str()), (Some(1), "lib.rs:85 eighty_one (81 lines)"));
}

/// `cargo build` and `cargo test` must compile every shared crate with the same features: where the tests'
/// dev-dependencies turned on one more feature of a crate (syn's `visit-mut` for rstest's macros, once_cell's
/// `std` for insta), `cargo test` compiled again every crate built with it, and every procedural macro and
/// every crate using one (tch, tokenizers, this workspace): `cargo test --no-run` after a fresh `cargo build`
/// took 321 CPU-seconds instead of 112 on 2 cores.
/// crates/cli/Cargo.toml turns those features on in every build; this finds a crate whose features the
/// tests' build would change (a new dev-dependency, or a new version of one), by name.
#[test]
fn cargo_test_compiles_every_shared_crate_with_the_features_cargo_build_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tree = |edges: &[&str]| -> std::collections::BTreeSet<String> {
        let out = std::process::Command::new(env!("CARGO"))
            .args(["tree", "--workspace", "--offline", "--prefix", "none", "--format", "{p} {f}"])
            .args(edges)
            .current_dir(root)
            .output()
            .expect("cargo tree runs");
        assert!(out.status.success(), "cargo tree: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).lines().map(|l| l.trim_end_matches(" (*)").to_string()).collect()
    };
    let (built, tested) = (tree(&["--edges", "no-dev"]), tree(&[]));
    let changed: Vec<&String> = built.difference(&tested).collect();
    assert!(changed.is_empty(), "cargo test would compile these with other features than cargo build: {changed:?}");
    assert!(tested.len() > built.len(), "the dev-dependencies (rstest, insta) are in the tests' tree");
}
