//! nbgrader: the homework chapters' notebooks as released to students — the solution cells cut to
//! `todo!()`, nbgrader's metadata and its checksums — and as the instructors' source version, the
//! reference solutions put in from `solutions/`. nbgrader itself can then hand the notebooks out and
//! collect them. Which chapters are homework, and their solution cells as the grader reads them (base code
//! for the similarity report), are the grader's: `anatomy_grade::handin`.
use std::path::{Path, PathBuf};

use anatomy_notebooks::{chapter_cells, notebook_json, release_chapter, source_chapter, Cell};
use anyhow::{bail, Context, Result};
use md5::{Digest, Md5};
use serde_json::Value;

use anatomy_course::write_whole;
use anatomy_course::EXERCISES;
use anatomy_grade::handin::homework_chapters;
use anatomy_grade::points::CourseFile;

/// Checks a homework chapter's cells against the course: every solution cell names an exercise and has a
/// check cell worth the exercise's points in `exercises/course.toml`.
fn check_cells(chapter: &Path, markdown: &str, course: Option<&CourseFile>) -> Result<()> {
    let cells = chapter_cells(markdown);
    for cell in &cells {
        let Cell::Solution { id, .. } = cell else { continue };
        let Some(e) = EXERCISES.iter().find(|e| e.name == id) else {
            bail!(
                "{}: the solution cell {id:?} names no exercise (see `cargo anatomy exercises list`)",
                chapter.display()
            );
        };
        let points = cells.iter().find_map(|c| match c {
            Cell::Check { id, points, .. } if id == e.name => Some(*points),
            _ => None,
        });
        match (points, course) {
            (None, _) => bail!("{}: the solution cell {id} has no `check:{id}` cell", chapter.display()),
            (Some(p), Some(course)) if p != course.max(e.name) => bail!(
                "{}: check:{id} is worth {p} points, the course gives {}: make them agree",
                chapter.display(),
                course.max(e.name)
            ),
            _ => {}
        }
    }
    Ok(())
}

/// nbgrader's checksum of a solution or grade cell (its `utils.compute_checksum`): MD5 over the source, the
/// cell type, whether it is a grade, solution and locked cell (Python's `True`/`False`), its id and, for a
/// grade cell, its points as Python prints a float.
fn nbgrader_checksum(source: &str, nbgrader: &Value) -> String {
    let flag = |key: &str| if nbgrader[key] == true { "True" } else { "False" };
    let locked = if nbgrader["solution"] == true {
        "False"
    } else if nbgrader["grade"] == true {
        "True"
    } else {
        flag("locked")
    };
    let mut md5 = Md5::new();
    for part in [source, "code", flag("grade"), flag("solution"), locked, nbgrader["grade_id"].as_str().unwrap_or("")] {
        md5.update(part.as_bytes());
    }
    if nbgrader["grade"] == true {
        md5.update(format!("{:?}", nbgrader["points"].as_f64().unwrap_or(0.0)).as_bytes());
    }
    format!("{:x}", md5.finalize())
}

/// The released notebook of a chapter: its students' version, with nbgrader's checksums.
fn released_notebook(markdown: &str) -> Result<(String, String)> {
    let released = release_chapter(markdown)?;
    let mut json: Value = serde_json::from_str(&notebook_json(&released))?;
    for cell in json["cells"].as_array_mut().expect("cells") {
        let source: String =
            cell["source"].as_array().map(|l| l.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        if let Some(nbgrader) = cell["metadata"].get_mut("nbgrader") {
            let checksum = nbgrader_checksum(&source, nbgrader);
            nbgrader["checksum"] = checksum.into();
            nbgrader["cell_type"] = "code".into();
        }
    }
    Ok((released, serde_json::to_string_pretty(&json)? + "\n"))
}

/// The homework chapters of `root`, each checked against the course (see [`check_cells`]).
fn checked_homework(root: &Path) -> Result<Vec<(PathBuf, PathBuf, String)>> {
    let chapters = homework_chapters(root)?;
    if chapters.is_empty() {
        bail!(
            "no chapter in {} has a solution cell (```rust solution:NAME): nothing to release",
            root.join("chapters").display()
        );
    }
    let course_file = root.join("exercises").join("course.toml");
    let course = if course_file.exists() { Some(anatomy_gradebook::export::load_course(&course_file)?) } else { None };
    for (chapter, _, markdown) in &chapters {
        check_cells(chapter, markdown, course.as_ref())?;
    }
    Ok(chapters)
}

/// Releases every homework chapter of `root`: the students' notebooks into `out` (default
/// `target/release-notebooks/`), or, `in_place`, the chapters and notebooks themselves (the students'
/// copy of `make handout`). Everything is made before anything is written. Returns the files written.
pub fn release(root: &Path, out: Option<PathBuf>, in_place: bool) -> Result<Vec<PathBuf>> {
    let out = out.unwrap_or_else(|| root.join("target").join("release-notebooks"));
    // A chapter that cannot be released leaves no file.
    let mut writes = Vec::new();
    for (chapter, notebook, markdown) in checked_homework(root)? {
        let (released, json) =
            released_notebook(&markdown).with_context(|| format!("cannot release {}", chapter.display()))?;
        if in_place {
            writes.push((chapter, released));
            writes.push((notebook, json));
        } else {
            writes.push((out.join(notebook.file_name().expect("a file")), json));
        }
    }
    write_all(writes)
}

/// Writes the instructors' version of every homework notebook of `root` into `out` (default
/// `target/source-notebooks/`): each solution cell's `todo!()` filled in with the reference solution from
/// `solutions/` between nbgrader's markers ([`source_chapter`]), nbgrader's metadata without checksums —
/// what nbgrader's `source/ASSIGNMENT/` holds for `nbgrader generate_assignment`, and what `make test`
/// runs to see the check pass. Its release is the students' notebook. Returns the files written.
pub fn source(root: &Path, out: Option<PathBuf>) -> Result<Vec<PathBuf>> {
    let out = out.unwrap_or_else(|| root.join("target").join("source-notebooks"));
    let mut writes = Vec::new();
    for (chapter, notebook, markdown) in checked_homework(root)? {
        let source = source_chapter(&markdown, &root.join("solutions"))
            .with_context(|| format!("cannot make the instructors' version of {}", chapter.display()))?;
        writes.push((out.join(notebook.file_name().expect("a file")), notebook_json(&source)));
    }
    write_all(writes)
}

/// Writes each file whole (its folder made first); returns the files written.
fn write_all(writes: Vec<(PathBuf, String)>) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for (path, text) in writes {
        std::fs::create_dir_all(path.parent().expect("a folder"))
            .with_context(|| format!("cannot create {}", path.display()))?;
        write_whole(&path, &text)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md5_of(parts: &[&str]) -> String {
        format!("{:x}", Md5::digest(parts.concat().as_bytes()))
    }

    #[test]
    fn the_checksum_is_nbgraders_over_source_type_roles_id_and_a_grade_cells_points() {
        let solution = serde_json::json!({"grade": false, "solution": true, "locked": true, "grade_id": "layer_norm"});
        assert_eq!(
            nbgrader_checksum("todo!()", &solution),
            md5_of(&["todo!()", "code", "False", "True", "False", "layer_norm"])
        );
        let check =
            serde_json::json!({"grade": true, "solution": false, "locked": false, "grade_id": "check_x", "points": 5});
        assert_eq!(
            nbgrader_checksum("check()", &check),
            md5_of(&["check()", "code", "True", "False", "True", "check_x", "5.0"])
        );
        let half = serde_json::json!({"grade": true, "solution": false, "grade_id": "check_x", "points": 2.5});
        assert_eq!(
            nbgrader_checksum("check()", &half),
            md5_of(&["check()", "code", "True", "False", "True", "check_x", "2.5"])
        );
        let locked = serde_json::json!({"locked": true, "grade_id": "read_only"});
        assert_eq!(nbgrader_checksum("", &locked), md5_of(&["", "code", "False", "False", "True", "read_only"]));
        assert_ne!(
            nbgrader_checksum("todo!() ", &solution),
            nbgrader_checksum("todo!()", &solution),
            "the source counts"
        );
    }

    #[test]
    fn a_chapters_solution_cells_must_name_an_exercise_with_a_check_cell_worth_its_points() {
        let course = CourseFile {
            points: EXERCISES.iter().map(|e| (e.name.to_string(), e.points)).collect(),
            late: None,
            assignments: vec![],
        };
        let chapter = Path::new("chapters/99-test.md");
        let cells = |id: &str, check: &str| format!("Text.\n\n```rust solution:{id}\nfn f() {{}}\n```\n\n{check}");
        let checked = "```rust check:layer_norm points=5\ncheck();\n```\n";
        assert!(check_cells(chapter, &cells("layer_norm", checked), Some(&course)).is_ok());
        let error = check_cells(chapter, &cells("softmax", ""), Some(&course)).unwrap_err().to_string();
        assert_eq!(
            error,
            "chapters/99-test.md: the solution cell \"softmax\" names no exercise (see `cargo anatomy exercises list`)"
        );
        let error = check_cells(chapter, &cells("layer_norm", ""), None).unwrap_err().to_string();
        assert_eq!(error, "chapters/99-test.md: the solution cell layer_norm has no `check:layer_norm` cell");
        let worth_3 = checked.replace("points=5", "points=3");
        let error = check_cells(chapter, &cells("layer_norm", &worth_3), Some(&course)).unwrap_err().to_string();
        assert_eq!(
            error,
            "chapters/99-test.md: check:layer_norm is worth 3 points, the course gives 5: make them agree"
        );
        assert!(check_cells(chapter, &cells("layer_norm", &worth_3), None).is_ok(), "no course file: any points");
    }

    /// The instructors' version is the chapter with the reference solution put in from `solutions/`,
    /// without checksums; the release of the same chapter has none of it; a copy without `solutions/`
    /// (the students') cannot make it, and writes nothing.
    #[test]
    fn the_instructors_version_puts_the_reference_solution_in_and_the_release_has_none_of_it() {
        let root = crate::helpers::scratch("nbgrader-source");
        for folder in ["chapters", "solutions"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        let chapter = concat!(
            "# Homework\n\n```rust solution:layer_norm\npub fn layer_norm() -> i64 {\n    todo!()\n}\n```\n\n",
            "```rust check:layer_norm points=5\ncheck();\n```\n"
        );
        std::fs::write(root.join("chapters/hw.md"), chapter).unwrap();
        std::fs::write(root.join("solutions/layer_norm.rs"), "pub fn layer_norm() -> i64 {\n    secret()\n}\n")
            .unwrap();
        let solution_cell = |path: &Path| {
            let notebook: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let cell =
                notebook["cells"].as_array().unwrap().iter().find(|c| c["metadata"]["nbgrader"]["solution"] == true);
            let cell = cell.unwrap().clone();
            (cell["source"].as_array().unwrap().iter().filter_map(Value::as_str).collect::<String>(), cell)
        };
        let written = source(&root, None).unwrap();
        assert_eq!(written, [root.join("target/source-notebooks/hw.ipynb")]);
        let (code, cell) = solution_cell(&written[0]);
        assert_eq!(code, "pub fn layer_norm() -> i64 {\n    // BEGIN SOLUTION\n    secret()\n    // END SOLUTION\n}");
        assert!(cell["metadata"]["nbgrader"].get("checksum").is_none(), "{cell}");
        let released = release(&root, None, false).unwrap();
        assert_eq!(solution_cell(&released[0]).0, "pub fn layer_norm() -> i64 {\n    todo!()\n}");

        std::fs::remove_dir_all(root.join("solutions")).unwrap();
        let error = format!("{:#}", source(&root, Some(root.join("out"))).unwrap_err());
        assert!(error.contains("cannot make the instructors' version of") && error.contains("cannot read"), "{error}");
        assert!(!root.join("out").exists(), "nothing is written");
    }

    #[test]
    fn a_released_notebook_has_its_solutions_cut_and_each_nbgrader_cell_its_checksum() {
        let chapter =
            "# A chapter\n\n```rust solution:layer_norm\nfn f() {\n    // BEGIN SOLUTION\n    secret();\n    \
                       // END SOLUTION\n}\n```\n\n```rust check:layer_norm points=5\ncheck();\n```\n";
        let (released, json) = released_notebook(chapter).unwrap();
        assert!(!released.contains("secret") && released.contains("todo!()"), "{released}");
        let notebook: Value = serde_json::from_str(&json).unwrap();
        let graded: Vec<&Value> =
            notebook["cells"].as_array().unwrap().iter().filter(|c| c["metadata"].get("nbgrader").is_some()).collect();
        assert_eq!(graded.len(), 2);
        for cell in graded {
            let source: String = cell["source"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
            let nbgrader = &cell["metadata"]["nbgrader"];
            assert!(!source.contains("secret"), "{source}");
            assert_eq!(nbgrader["cell_type"], "code");
            assert_eq!(nbgrader["checksum"].as_str().unwrap(), nbgrader_checksum(&source, nbgrader), "{cell}");
        }
    }
}
