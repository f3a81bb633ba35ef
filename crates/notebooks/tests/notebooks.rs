//! The notebooks are made from chapters/ and must not drift from them; a homework chapter's solution and
//! check fences become nbgrader's cells, and its release cuts the solutions.
use std::path::{Path, PathBuf};

use anatomy_notebooks::{
    cell_sources, chapter_cells, chapter_notebooks, drift, fence_errors, notebook_json, release_chapter,
    source_chapter, Cell, SETUP_CELL,
};

#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;
use test_dir::TestDir;

/// The project's root, which holds chapters/ and notebooks/.
fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

#[test]
fn every_chapter_has_its_notebook_and_they_are_in_sync() {
    let root = &project_root();
    let pairs = chapter_notebooks(root).unwrap();
    assert_eq!(pairs.len(), 14, "the overview, one notebook per chapter section, and the homework's");
    for (chapter, notebook) in pairs {
        let committed = std::fs::read_to_string(&notebook).unwrap_or_default();
        let markdown = std::fs::read_to_string(&chapter).unwrap();
        if let Some(difference) = drift(&markdown, &committed).unwrap() {
            let tracked = notebook.strip_prefix(root).unwrap().display();
            panic!(
                "{tracked} differs from {} ({difference}); the notebooks are generated from the chapters. \
                 To keep an edit of your own: `cp {tracked} my-notebooks/` (your working copies, which \
                 `make notebooks` opens and nothing overwrites), then `git checkout {tracked}`. A change \
                 for everyone goes into the chapter, then `cargo anatomy notebooks build`.",
                chapter.strip_prefix(root).unwrap().display(),
            );
        }
        let json: serde_json::Value = serde_json::from_str(&committed).unwrap();
        assert_eq!(json["metadata"]["kernelspec"]["name"], "rust");
        assert_eq!(json["nbformat"], 4);
        let cells = json["cells"].as_array().unwrap();
        let first: String = cells[0]["source"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
        assert_eq!(first, SETUP_CELL, "every notebook starts with the set-up cell");
        let code: String = cells
            .iter()
            .filter(|c| c["cell_type"] == "code")
            .flat_map(|c| c["source"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_string()))
            .collect();
        assert!(
            !code.contains(")?;") && !code.contains(")?\n"),
            "{}: cells use unwrap/expect, not a top-level `?`",
            notebook.display()
        );
    }
}

/// JupyterLab cuts code lines off at about 100 characters: no chapter cell may be wider.
#[test]
fn code_cells_fit_the_notebook_width() {
    let root = &project_root();
    let mut wide = vec![];
    for (chapter, _) in chapter_notebooks(root).unwrap() {
        let markdown = std::fs::read_to_string(&chapter).unwrap();
        for cell in chapter_cells(&markdown) {
            if let Some(code) = cell.code() {
                let name = chapter.file_name().unwrap().to_string_lossy().into_owned();
                wide.extend(code.lines().filter(|l| l.chars().count() > 100).map(|l| format!("{name}: {l}")));
            }
        }
    }
    assert!(wide.is_empty(), "code lines over 100 characters:\n{}", wide.join("\n"));
    assert!(SETUP_CELL.lines().all(|l| l.chars().count() <= 100));
}

#[test]
fn chapters_split_into_markdown_and_rust_cells() {
    let cells = chapter_cells("# Title\ntext\n```rust\nlet x = 1;\n```\nmore\n```text\nnot code\n```\n");
    assert_eq!(
        cells,
        [
            Cell::Markdown("# Title\ntext".into()),
            Cell::Code("let x = 1;".into()),
            Cell::Markdown("more\n```text\nnot code\n```".into())
        ]
    );
}

/// A homework chapter: nbgrader's solution and check cells come from the fence's words, and the
/// students' version cuts each solution region to `todo!()` at its indentation, as nbgrader does.
#[test]
fn solution_and_check_fences_become_nbgrader_cells_and_release_cuts_the_regions() {
    let chapter = "# Homework\n\n```rust solution:cross_attention\npub fn f() -> i64 {\n    // BEGIN SOLUTION\n    \
                   1 + 1\n    // END SOLUTION\n}\n```\n\n```rust check:cross_attention points=20\ncheck(f)\n```\n";
    let cells = chapter_cells(chapter);
    assert_eq!(
        cells[1..],
        [
            Cell::Solution {
                id: "cross_attention".into(),
                code: "pub fn f() -> i64 {\n    // BEGIN SOLUTION\n    1 + 1\n    // END SOLUTION\n}".into()
            },
            Cell::Check { id: "cross_attention".into(), points: 20.0, code: "check(f)".into() },
        ]
    );
    let json: serde_json::Value = serde_json::from_str(&notebook_json(chapter)).unwrap();
    let solution = &json["cells"][2]["metadata"];
    assert_eq!(solution["nbgrader"]["solution"], true);
    assert_eq!(solution["nbgrader"]["grade_id"], "cross_attention");
    assert_eq!(solution["deletable"], false);
    let check = &json["cells"][3]["metadata"];
    assert_eq!((check["nbgrader"]["grade"].clone(), check["nbgrader"]["locked"].clone()), (true.into(), true.into()));
    assert_eq!(check["nbgrader"]["points"], 20.0);
    assert_eq!(check["editable"], false);

    let released = release_chapter(chapter).unwrap();
    assert!(released.contains("pub fn f() -> i64 {\n    todo!()\n}\n"), "{released}");
    assert!(!released.contains("1 + 1"));
    // The released notebook is its released chapter's: in sync with it, and not with the original.
    let mut notebook = notebook_json(&released);
    assert_eq!(drift(&released, &notebook).unwrap(), None);
    assert!(drift(chapter, &notebook).unwrap().is_some());
    // Only the nbgrader role's checksum (added at release) is left out of the comparison, not the role.
    notebook = notebook.replacen("\"solution\": true", "\"solution\": false", 1);
    assert!(drift(&released, &notebook).unwrap().unwrap().contains("cell 3"));

    for (bad, says) in [
        ("```rust\n// BEGIN SOLUTION\n// END SOLUTION\n```\n", "outside a solution cell"),
        ("```rust solution:x\n// BEGIN SOLUTION\n// BEGIN SOLUTION\n```\n", "inside another"),
        ("```rust solution:x\n// BEGIN SOLUTION\n```\n", "ends inside its solution region"),
        ("```rust solution:x\n// END SOLUTION\n```\n", "without its BEGIN"),
    ] {
        let e = release_chapter(bad).unwrap_err().to_string();
        assert!(e.contains(says), "{bad:?}: {e}");
    }
    assert_eq!(fence_errors("```rust check:x points=lots\n```\n").len(), 1);
    assert_eq!(fence_errors("```rust solution:x extra\n```\n").len(), 1);
    assert!(fence_errors(chapter).is_empty());
}

/// The instructors' version fills each solution cell's `todo!()` with the body of the reference solution's
/// function, between nbgrader's markers at the `todo!()`'s indentation; its release is the chapter again.
#[test]
fn the_instructors_version_fills_the_todo_from_the_reference_solution() {
    let solutions = TestDir::new("notebooks-solutions");
    let reference = concat!(
        "//! Reference.\nuse tch::Tensor;\n\npub fn f(\n    x: i64,\n) -> i64 {\n    let y = x + 1;\n\n",
        "    if y > 2 {\n        y\n    } else {\n        0\n    }\n}\n\nfn g() {}\n"
    );
    std::fs::write(solutions.join("f.rs"), reference).unwrap();
    let chapter = concat!(
        "# Homework\n\n```rust\nlet x = 1;\n```\n\n```rust solution:f\npub fn f(x: i64) -> i64 {\n    todo!()\n}\n",
        "```\n\n```rust check:f points=5\ncheck(f)\n```\n"
    );
    let source = source_chapter(chapter, &solutions).unwrap();
    let cell = concat!(
        "pub fn f(x: i64) -> i64 {\n    // BEGIN SOLUTION\n    let y = x + 1;\n\n    if y > 2 {\n        y\n",
        "    } else {\n        0\n    }\n    // END SOLUTION\n}"
    );
    assert_eq!(chapter_cells(&source)[2], Cell::Solution { id: "f".into(), code: cell.into() });
    assert_eq!(release_chapter(&source).unwrap(), chapter, "the release of the instructors' version is the chapter");
    // A cell that keeps its solution inline is left as it is, and a chapter without solution cells too.
    assert_eq!(source_chapter(&source, &solutions).unwrap(), source);
    assert_eq!(
        source_chapter("# Text\n\n```rust\ntodo!()\n```\n", &solutions).unwrap(),
        "# Text\n\n```rust\ntodo!()\n```\n"
    );

    for (bad, says) in [
        (chapter.replace("    todo!()\n", "    1\n"), "has 0 `todo!()` lines"),
        (chapter.replace("    todo!()\n", "    todo!()\n    todo!()\n"), "has 2 `todo!()` lines"),
        (chapter.replace("solution:f", "solution:h"), "cannot read"),
    ] {
        let e = format!("{:#}", source_chapter(&bad, &solutions).unwrap_err());
        assert!(e.contains(says), "{e}");
    }
    std::fs::write(solutions.join("f.rs"), "pub fn other() {}\n").unwrap();
    assert!(source_chapter(chapter, &solutions).unwrap_err().to_string().contains("has no function `f`"));
}

/// The lines of function `name`'s body in a Rust file, trimmed: those after the line that opens it, to
/// its closing `}` (read here independently of the crate's own reading).
fn body_lines(text: &str, name: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| l.contains(&format!("fn {name}("))).unwrap();
    let open = start + lines[start..].iter().position(|l| l.ends_with('{')).unwrap();
    let close = open + lines[open..].iter().position(|l| *l == "}").unwrap();
    lines[open + 1..close].iter().map(|l| l.trim().to_string()).collect()
}

/// The homework is not spoiled: its chapter and notebook, as a learner reads them, show the task — a
/// `todo!()` in each solution cell, and no line of the reference solution — while the instructors'
/// version (`notebooks release --source`, nbgrader's source) holds the reference solution whole, put in
/// from `solutions/`, and releases back to the chapter.
#[test]
fn the_homework_chapter_and_notebook_show_the_task_and_only_the_instructors_version_the_answer() {
    let root = &project_root();
    let mut homework = 0;
    for (chapter, notebook) in chapter_notebooks(root).unwrap() {
        let markdown = std::fs::read_to_string(&chapter).unwrap();
        let ids: Vec<String> = chapter_cells(&markdown)
            .into_iter()
            .filter_map(|c| if let Cell::Solution { id, .. } = c { Some(id) } else { None })
            .collect();
        if ids.is_empty() {
            continue;
        }
        homework += 1;
        let name = chapter.file_name().unwrap().to_string_lossy().into_owned();
        let cells: Vec<String> =
            cell_sources(&std::fs::read_to_string(&notebook).unwrap()).unwrap().into_iter().map(|c| c.1).collect();
        for (shown, text) in [(name.clone(), markdown.clone()), (format!("{name}'s notebook"), cells.join("\n"))] {
            assert!(!text.contains("BEGIN SOLUTION"), "{shown} holds a solution region");
            assert_eq!(text.lines().filter(|l| l.trim() == "todo!()").count(), ids.len(), "{shown}: a todo!() a cell");
        }
        if !root.join("solutions").is_dir() {
            continue; // a students' copy: no reference to compare with
        }
        let source = source_chapter(&markdown, &root.join("solutions")).unwrap();
        for id in &ids {
            let reference = std::fs::read_to_string(root.join("solutions").join(format!("{id}.rs"))).unwrap();
            let body: Vec<String> = body_lines(&reference, id).into_iter().filter(|l| l.len() > 2).collect();
            assert!(body.len() >= 5, "{id}: {body:?}");
            for line in &body {
                let seen = |text: &str| text.lines().any(|l| l.trim() == line);
                assert!(!seen(&markdown), "{name} shows the reference solution's line {line:?}");
                assert!(
                    !cells.iter().any(|c| seen(c)),
                    "{name}'s notebook shows the reference solution's line {line:?}"
                );
                assert!(seen(&source), "the instructors' version of {name} lacks {line:?}");
            }
        }
        assert_eq!(release_chapter(&source).unwrap(), markdown, "{name}: the release of the instructors' version");
    }
    assert_eq!(homework, 1, "the homework chapter");
}

/// Saving a notebook from Jupyter (outputs, execution counts, changed metadata) is not drift; an edited
/// cell source is, and the message names the cell.
#[test]
fn the_drift_check_reads_cell_sources_only() {
    let chapter = "# A chapter\n\nSome words.\n\n```rust\nlet x = 1;\nx + 1\n```\n\nMore words.\n";
    let generated = notebook_json(chapter);
    assert_eq!(drift(chapter, &generated).unwrap(), None);
    let mut saved: serde_json::Value = serde_json::from_str(&generated).unwrap();
    saved["metadata"]["language_info"]["version"] = "0.22.0".into();
    saved["metadata"]["widgets"] = serde_json::json!({"state": {}});
    saved["cells"][2]["execution_count"] = 3.into();
    saved["cells"][2]["outputs"] = serde_json::json!([{"output_type": "execute_result", "data": {"text/plain": ["2"]}, "execution_count": 3, "metadata": {}}]);
    saved["cells"][1]["metadata"] = serde_json::json!({"collapsed": true});
    let saved_text = serde_json::to_string(&saved).unwrap(); // Jupyter's own formatting differs too
    assert_eq!(drift(chapter, &saved_text).unwrap(), None, "a saved notebook is in sync");
    saved["cells"][2]["source"] = serde_json::json!(["let x = 2;\n", "x + 1"]);
    let edited = drift(chapter, &serde_json::to_string(&saved).unwrap()).unwrap().expect("an edited source is drift");
    assert!(
        edited.contains("cell 3")
            && edited.contains("line 1")
            && edited.contains("let x = 1;")
            && edited.contains("let x = 2;"),
        "{edited}"
    );
}
