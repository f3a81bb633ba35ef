//! The homework as a notebook, through the binary: `anatomy notebooks release` writes the students'
//! version (solutions cut to `todo!()`, no outputs, nbgrader's metadata and checksums) and, `--source`,
//! the instructors' (the reference solution put in from `solutions/`); filled in and
//! submitted in nbgrader's layout, `anatomy exercises grade` grades only the solution cells — honest,
//! wrong, unfinished and hostile notebooks — and never runs a notebook's other cells.
//!
//! It needs `solutions/` (the filled-in notebooks are made from the reference solution).
#![cfg(anatomy_solutions)]

#[path = "../../../tests/common/class.rs"]
mod class;
#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;

use std::collections::BTreeMap;
use std::path::Path;

use anatomy_course::find;
use anatomy_course::project_root;
use class::anatomy;
use serde_json::{json, Value};
use test_dir::TestDir;

const NOTEBOOK: &str = "homework-cross-attention.ipynb";

fn source(cell: &Value) -> String {
    cell["source"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect()
}

fn solution_cell(notebook: &mut Value) -> &mut Value {
    let cells = notebook["cells"].as_array_mut().unwrap();
    cells.iter_mut().find(|c| c["metadata"]["nbgrader"]["solution"] == true).unwrap()
}

/// The body of the reference solution's function (the lines between its signature and its last `}`).
fn reference_body() -> String {
    let text = std::fs::read_to_string(find("cross_attention").unwrap().solution_file()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let open = lines.iter().position(|l| l.starts_with(") -> (Tensor, Tensor) {")).unwrap();
    let close = lines.iter().rposition(|l| *l == "}").unwrap();
    lines[open + 1..close].iter().map(|l| format!("{l}\n")).collect()
}

fn release(out: &Path) -> Value {
    let (code, stdout, err) = anatomy(&["notebooks", "release", "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(stdout.contains(NOTEBOOK), "{stdout}");
    serde_json::from_str(&std::fs::read_to_string(out.join(NOTEBOOK)).unwrap()).unwrap()
}

/// MD5 by coreutils' `md5sum`, an implementation independent of the one the binary uses.
fn md5sum(text: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("md5sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_string()
}

#[test]
fn the_released_notebook_has_no_solution_no_outputs_and_nbgraders_metadata() {
    let dir = TestDir::new("release");
    let released = release(&dir);
    let text = serde_json::to_string(&released).unwrap();
    assert!(!text.contains("BEGIN SOLUTION") && !text.contains("q.bmm"), "the reference is cut out");
    let cells = released["cells"].as_array().unwrap();
    assert!(cells
        .iter()
        .filter(|c| c["cell_type"] == "code")
        .all(|c| c["outputs"] == json!([]) && c["execution_count"].is_null()));
    let graded: Vec<&Value> = cells.iter().filter(|c| c["metadata"].get("nbgrader").is_some()).collect();
    assert_eq!(graded.len(), 2, "one solution cell and one check cell");
    let (solution, check) = (graded[0], graded[1]);
    assert!(source(solution).contains("pub fn cross_attention(") && source(solution).contains("\n    todo!()\n}"));
    let course = anatomy_gradebook::export::load_course(&project_root().join("exercises/course.toml")).unwrap();
    assert_eq!(solution["metadata"]["nbgrader"]["grade_id"], "cross_attention");
    assert_eq!(solution["metadata"]["nbgrader"]["solution"], true);
    assert_eq!(solution["metadata"]["deletable"], false);
    assert_eq!(check["metadata"]["nbgrader"]["grade"], true);
    assert_eq!(check["metadata"]["nbgrader"]["locked"], true);
    assert_eq!(check["metadata"]["editable"], false);
    assert_eq!(check["metadata"]["nbgrader"]["points"].as_f64(), Some(course.max("cross_attention")));
    for cell in [solution, check] {
        let n = &cell["metadata"]["nbgrader"];
        assert_eq!(n["schema_version"], 3);
        assert_eq!(n["cell_type"], "code");
        // nbgrader's compute_checksum: source, type, grade/solution/locked as Python prints them, id, points.
        let flag = |b: bool| if b { "True" } else { "False" };
        let (grade, solution) = (n["grade"] == true, n["solution"] == true);
        let mut parts = format!(
            "{}code{}{}{}{}",
            source(cell),
            flag(grade),
            flag(solution),
            flag(grade && !solution),
            n["grade_id"].as_str().unwrap()
        );
        if grade {
            parts += &format!("{:?}", n["points"].as_f64().unwrap());
        }
        assert_eq!(n["checksum"].as_str().unwrap(), md5sum(&parts), "{}", n["grade_id"]);
    }
    // The learner's notebook shows the task; the instructors' version (`release --source`, nbgrader's
    // source/) holds the reference solution itself, put in from solutions/, not a copy that could drift.
    let committed = std::fs::read_to_string(project_root().join("notebooks").join(NOTEBOOK)).unwrap();
    assert!(!committed.contains("BEGIN SOLUTION") && !committed.contains("q.bmm"), "the learner's notebook");
    let out = dir.join("source");
    let (code, stdout, err) = anatomy(&["notebooks", "release", "--source", "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(stdout.contains(NOTEBOOK), "{stdout}");
    let mut instructors: Value = serde_json::from_str(&std::fs::read_to_string(out.join(NOTEBOOK)).unwrap()).unwrap();
    let cell = source(solution_cell(&mut instructors));
    let region: String = cell
        .lines()
        .skip_while(|l| !l.contains("BEGIN SOLUTION"))
        .skip(1)
        .take_while(|l| !l.contains("END SOLUTION"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(region, reference_body(), "the source's solution region is solutions/cross_attention.rs's body");
    // Every other cell is the learner's, and the source's release is the students' notebook.
    let learner: Value = serde_json::from_str(&committed).unwrap();
    let others = |nb: &Value| -> Vec<String> {
        nb["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["metadata"]["nbgrader"]["solution"] != true)
            .map(source)
            .collect()
    };
    assert_eq!(others(&instructors), others(&learner));
    assert_eq!(
        cell.replace(&format!("    // BEGIN SOLUTION\n{region}    // END SOLUTION\n"), "    todo!()\n"),
        source(solution)
    );
}

/// One student's notebook: the released one with its solution cell's `todo!()` replaced by `body`, and
/// `edit` applied to the whole notebook.
fn hand_in(folder: &Path, released: &Value, body: Option<&str>, edit: impl FnOnce(&mut Value)) {
    let mut notebook = released.clone();
    if let Some(body) = body {
        let cell = solution_cell(&mut notebook);
        let filled = source(cell).replace("    todo!()\n", body);
        cell["source"] = json!(filled.split_inclusive('\n').collect::<Vec<_>>());
    }
    edit(&mut notebook);
    std::fs::create_dir_all(folder).unwrap();
    std::fs::write(folder.join(NOTEBOOK), serde_json::to_string_pretty(&notebook).unwrap()).unwrap();
}

fn add_code_cell(notebook: &mut Value, at: usize, code: &str) {
    let cell = json!({"cell_type": "code", "execution_count": null, "id": format!("added-{at}"), "metadata": {},
        "outputs": [], "source": code.split_inclusive('\n').collect::<Vec<_>>()});
    notebook["cells"].as_array_mut().unwrap().insert(at, cell);
}

#[test]
fn submitted_notebooks_are_graded_by_their_solution_cells_only_and_never_run() {
    let dir = TestDir::new("homework-class");
    let released = release(&dir.join("release"));
    let honest = reference_body();
    let course = dir.join("course");
    let submitted = course.join("submitted");
    std::fs::create_dir_all(&submitted).unwrap();
    std::fs::write(course.join("nbgrader_config.py"), "c = get_config()\n").unwrap();
    let marker = dir.join("MARKER");
    let at = |who: &str| submitted.join(who).join("hw");

    hand_in(&at("alice"), &released, Some(&honest), |_| {});
    hand_in(&at("bob"), &released, Some(&honest.replace(" / head_dim.sqrt()", "")), |_| {});
    // Carol did nothing, but forged a passing verdict into the check cell's outputs.
    hand_in(&at("carol"), &released, None, |nb| {
        let cells = nb["cells"].as_array_mut().unwrap();
        let check = cells.iter_mut().find(|c| c["metadata"]["nbgrader"]["grade"] == true).unwrap();
        check["outputs"] = json!([{"output_type": "execute_result", "execution_count": 1, "metadata": {},
            "data": {"text/plain": "✓ cross_attention passes its check"}}]);
    });
    // Dave's other cells would write a file and end the kernel's process, were the notebook run.
    hand_in(&at("dave"), &released, Some(&honest), |nb| {
        add_code_cell(nb, 1, &format!("std::fs::write({:?}, \"ran\").unwrap();\n", marker.display()));
        add_code_cell(nb, 4, "std::process::exit(0);\n");
    });
    // Eve links her notebook to Alice's.
    std::fs::create_dir_all(at("eve")).unwrap();
    std::os::unix::fs::symlink(at("alice").join(NOTEBOOK), at("eve").join(NOTEBOOK)).unwrap();
    // Frank calls LibTorch's finished attention from his solution cell.
    hand_in(&at("frank"), &released, Some(
        "    let (q, k, v) = (projections.query.forward(decoder_states), projections.key.forward(encoder_output),\n\
         \x20       projections.value.forward(encoder_output));\n\
         \x20   let mask = source_padding.map(|p| p.ne(0).unsqueeze(1));\n\
         \x20   let out = Tensor::scaled_dot_product_attention(&q, &k, &v, mask, 0.0, false, None, false);\n\
         \x20   (out, q)\n"), |_| {});
    // Grace's notebook is not JSON.
    std::fs::create_dir_all(at("grace")).unwrap();
    std::fs::write(at("grace").join(NOTEBOOK), "{\"cells\": [").unwrap();
    // Heidi imports what the set-up cells gave her and writes a helper: no clash with the grader's imports.
    hand_in(&at("heidi"), &released, Some(&honest), |nb| {
        let cell = solution_cell(nb);
        let code = format!(
            "use tch::Tensor;\nuse transformer_anatomy::exercises::support::Projections;\n\
             fn unused_helper(t: &Tensor) -> Tensor {{ t.shallow_clone() }}\n{}",
            source(cell)
        );
        cell["source"] = json!(code.split_inclusive('\n').collect::<Vec<_>>());
    });
    // Ivan's finished notebook is only in JupyterLab's autosave folder, which nbgrader ignores too.
    hand_in(&submitted.join("ivan").join(".ipynb_checkpoints"), &released, Some(&honest), |_| {});
    // Judy hands in the notebook at the top of her folder, not in nbgrader's layout.
    hand_in(&submitted.join("judy"), &released, Some(&honest), |_| {});

    let (code, out, err) =
        anatomy(&["exercises", "grade", course.to_str().unwrap(), "--only", "cross_attention", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let rows: BTreeMap<String, Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| (r["student"].as_str().unwrap().to_string(), r))
        .collect();
    let got = |who: &str| {
        (
            rows[who]["cross_attention"].as_str().unwrap().to_string(),
            rows[who]["messages"]["cross_attention"].to_string(),
        )
    };
    let expect = [
        ("alice", "passed", ""),
        ("bob", "failed", "the scores are not scaled"),
        ("carol", "not done", ""),
        ("dave", "passed", ""),
        ("eve", "failed", "is a symbolic link"),
        ("frank", "failed", "libtorch's finished attention"),
        ("grace", "failed", "is not a notebook"),
        ("heidi", "passed", ""),
        ("ivan", "not done", ""),
        ("judy", "passed", ""),
    ];
    assert_eq!(rows.len(), expect.len(), "{out}");
    let wrong: Vec<String> = expect
        .iter()
        .filter(|(who, status, words)| got(who).0 != *status || !got(who).1.contains(words))
        .map(|(who, status, words)| format!("{who}: expected {status} ({words:?}), got {:?}", got(who)))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
    // Frank's refusal names his notebook and the cell's line.
    assert!(got("frank").1.contains(&format!("{NOTEBOOK}:12:")), "{}", got("frank").1);
    assert!(!marker.exists(), "a cell other than the solution cell was run");
    assert_eq!(rows["alice"]["total_points"].as_f64(), Some(20.0), "{}", rows["alice"]);

    // The same notebooks handed in to Gradescope: its autograder grades the one submission's solution cell.
    for (who, score) in [("alice", 20.0), ("bob", 0.0)] {
        let root = dir.join(format!("gradescope-{who}"));
        std::fs::create_dir_all(root.join("submission")).unwrap();
        std::fs::create_dir_all(root.join("results")).unwrap();
        std::fs::copy(at(who).join(NOTEBOOK), root.join("submission").join(NOTEBOOK)).unwrap();
        let (code, _, err) =
            anatomy(&["exercises", "autograder", "run", "--root", root.to_str().unwrap(), "--only", "cross_attention"]);
        assert_eq!(code, Some(0), "{err}");
        let results: Value =
            serde_json::from_str(&std::fs::read_to_string(root.join("results/results.json")).unwrap()).unwrap();
        assert_eq!(results["score"].as_f64(), Some(score), "{who}: {results}");
    }
}

#[test]
fn release_in_place_keeps_chapter_and_notebook_in_sync_and_refuses_a_broken_region() {
    let dir = TestDir::new("release-in-place");
    let root = project_root();
    for part in ["chapters", "notebooks", "exercises"] {
        std::fs::create_dir_all(dir.join(part)).unwrap();
    }
    std::fs::copy(root.join("exercises/course.toml"), dir.join("exercises/course.toml")).unwrap();
    for name in ["homework-cross-attention.md", "08-decoder-and-masking.md"] {
        std::fs::copy(root.join("chapters").join(name), dir.join("chapters").join(name)).unwrap();
    }
    let (code, _, err) = anatomy(&["notebooks", "build", "--root", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = anatomy(&["notebooks", "release", "--in-place", "--root", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let chapter = std::fs::read_to_string(dir.join("chapters/homework-cross-attention.md")).unwrap();
    assert!(!chapter.contains("BEGIN SOLUTION") && chapter.contains("    todo!()\n"));
    let original = std::fs::read_to_string(root.join("chapters/homework-cross-attention.md")).unwrap();
    assert_eq!(chapter, original, "the chapter shows the task already: the release changes none of it");
    let (code, _, err) = anatomy(&["notebooks", "build", "--check", "--root", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "the released chapter and notebook are in sync: {err}");

    // A region never closed, and points that disagree with the course: one line each, nothing written.
    let out = dir.join("out");
    let broken = std::fs::read_to_string(root.join("chapters/homework-cross-attention.md")).unwrap();
    for (bad, says) in [
        (
            broken.replace("    todo!()\n", "    // BEGIN SOLUTION\n"),
            "the solution cell ends inside its solution region",
        ),
        (broken.replace("points=20", "points=15"), "worth 15 points, the course gives 20"),
        (broken.replace("solution:cross_attention", "solution:cross_attn"), "names no exercise"),
    ] {
        std::fs::write(dir.join("chapters/homework-cross-attention.md"), bad).unwrap();
        let (code, _, err) =
            anatomy(&["notebooks", "release", "--root", dir.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert_eq!(code, Some(1));
        assert!(err.contains(says) && err.trim().lines().count() == 1, "{err}");
        assert!(!out.exists(), "nothing is written");
    }
    // A copy without solutions/ (the students') cannot make the instructors' version: one line, no file.
    std::fs::write(dir.join("chapters/homework-cross-attention.md"), &original).unwrap();
    let (code, _, err) =
        anatomy(&["notebooks", "release", "--source", "--root", dir.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("solutions/cross_attention.rs") && err.trim().lines().count() == 1, "{err}");
    assert!(!out.exists(), "nothing is written");
}
