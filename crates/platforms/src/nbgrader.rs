//! nbgrader: the homework chapters' notebooks as released to students — the solution cells cut to
//! `todo!()`, nbgrader's metadata and its checksums. nbgrader itself can then hand the notebooks out and
//! collect them. Which chapters are homework, and their solution cells as the grader reads them (base code
//! for the similarity report), are the grader's: `anatomy_grade::handin`.
use std::path::{Path, PathBuf};

use anatomy_notebooks::{chapter_cells, notebook_json, release_chapter, Cell};
use anyhow::{bail, Context, Result};
use md5::{Digest, Md5};
use serde_json::Value;

use crate::handin::homework_chapters;
use crate::points::CourseFile;
use crate::sheet::write_whole;
use crate::EXERCISES;

/// Checks a homework chapter's cells against the course: every solution cell names an exercise and has a
/// check cell worth the exercise's points in `exercises/course.toml`.
fn check_cells(chapter: &Path, markdown: &str, course: Option<&CourseFile>) -> Result<()> {
    let cells = chapter_cells(markdown);
    for cell in &cells {
        let Cell::Solution { id, .. } = cell else { continue };
        let Some(e) = EXERCISES.iter().find(|e| e.name == id) else {
            bail!("{}: the solution cell {id:?} names no exercise (see `anatomy exercises list`)", chapter.display());
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

/// Releases every homework chapter of `root`: the students' notebooks into `out` (default
/// `target/release-notebooks/`), or, `in_place`, the chapters and notebooks themselves (the students'
/// copy of `make handout`). Everything is made before anything is written. Returns the files written.
pub fn release(root: &Path, out: Option<PathBuf>, in_place: bool) -> Result<Vec<PathBuf>> {
    let chapters = homework_chapters(root)?;
    if chapters.is_empty() {
        bail!(
            "no chapter in {} has a solution cell (```rust solution:NAME): nothing to release",
            root.join("chapters").display()
        );
    }
    let course_file = root.join("exercises").join("course.toml");
    let course = if course_file.exists() { Some(CourseFile::load(&course_file)?) } else { None };
    let out = out.unwrap_or_else(|| root.join("target").join("release-notebooks"));
    // A chapter that cannot be released leaves no file.
    let mut writes = Vec::new();
    for (chapter, notebook, markdown) in &chapters {
        check_cells(chapter, markdown, course.as_ref())?;
        let (released, json) =
            released_notebook(markdown).with_context(|| format!("cannot release {}", chapter.display()))?;
        if in_place {
            writes.push((chapter.clone(), released));
            writes.push((notebook.clone(), json));
        } else {
            writes.push((out.join(notebook.file_name().expect("a file")), json));
        }
    }
    let mut written = Vec::new();
    for (path, text) in writes {
        std::fs::create_dir_all(path.parent().expect("a folder"))
            .with_context(|| format!("cannot create {}", path.display()))?;
        write_whole(&path, &text)?;
        written.push(path);
    }
    Ok(written)
}
