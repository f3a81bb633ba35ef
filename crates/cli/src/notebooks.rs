//! `anatomy notebooks build`: chapters/*.md → notebooks/*.ipynb; `anatomy notebooks reset NAME`: the
//! learner's working copy in my-notebooks/ back as generated; `anatomy notebooks release`: the students'
//! version of a homework notebook (solutions cut to `todo!()`, with nbgrader's metadata and checksums).
use std::path::{Path, PathBuf};

use anatomy_exercises::{course::Course, handin, Exercise, EXERCISES};
use anyhow::{bail, Context, Result};
use md5::{Digest, Md5};
use serde_json::Value;
use transformer_anatomy::notebook::{
    chapter_cells, chapter_notebooks, drift, fence_errors, notebook_json, release_chapter, Cell,
};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Write the notebook of every chapter whose cells changed (or, with --check, only report them).
    /// A notebook that differs only in outputs or metadata (run and saved in Jupyter) is left alone.
    Build {
        /// Change nothing; exit 1 if a notebook differs from what its chapter makes.
        #[arg(long)]
        check: bool,
        /// The project folder (default: this crate's).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// Write the students' version of every homework notebook (a chapter with nbgrader solution cells):
    /// each `// BEGIN SOLUTION` … `// END SOLUTION` region cut to `todo!()`, no outputs, nbgrader's
    /// metadata (schema 3) with its checksums, as `nbgrader generate_assignment` would release it.
    Release {
        /// Where to write NAME.ipynb (e.g. nbgrader's release/ASSIGNMENT/); default target/release-notebooks/.
        #[arg(long, value_name = "DIR", conflicts_with = "in_place")]
        out: Option<PathBuf>,
        /// Replace the homework's chapter and notebook in the project folder itself (the students' copy
        /// that `make handout` writes).
        #[arg(long)]
        in_place: bool,
        /// The project folder (default: this crate's).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// Put back your working copy of a notebook (my-notebooks/NAME.ipynb, which `make notebooks` opens)
    /// as notebooks/ holds it; your edited copy is kept beside it as NAME.ipynb.old.
    Reset {
        /// The notebook, e.g. `03-multi-head-attention` or just `03`.
        name: String,
        /// The project folder (default: this crate's).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
}

pub fn run(args: Args) -> Result<()> {
    let (check, root) = match args.command {
        Command::Build { check, root } => (check, root),
        Command::Reset { name, root } => {
            return reset(&root.unwrap_or_else(|| PathBuf::from(env!("ANATOMY_PROJECT_ROOT"))), &name)
        }
        Command::Release { out, in_place, root } => {
            let root = root.unwrap_or_else(|| PathBuf::from(env!("ANATOMY_PROJECT_ROOT")));
            return release(&root, out, in_place);
        }
    };
    let root = root.unwrap_or_else(|| PathBuf::from(env!("ANATOMY_PROJECT_ROOT")));
    let mut stale = vec![];
    for (chapter, notebook) in chapter_notebooks(&root)? {
        let markdown = std::fs::read_to_string(&chapter)?;
        let difference = match std::fs::read_to_string(&notebook) {
            Ok(text) => drift(&markdown, &text).unwrap_or_else(|e| Some(format!("{e:#}"))),
            Err(_) => Some("missing".to_string()),
        };
        let Some(difference) = difference else { continue };
        let wanted = notebook_json(&markdown);
        if check {
            stale.push(format!("{} ({difference})", notebook.display()));
        } else {
            std::fs::write(&notebook, wanted)?;
            println!("wrote {}", notebook.display());
        }
    }
    if !stale.is_empty() {
        bail!("out of date (run `anatomy notebooks build`): {}", stale.join(", "));
    }
    Ok(())
}

/// Copies notebooks/NAME.ipynb over my-notebooks/NAME.ipynb, keeping the old copy as NAME.ipynb.old.
fn reset(root: &Path, name: &str) -> Result<()> {
    let generated: Vec<PathBuf> = std::fs::read_dir(root.join("notebooks"))
        .with_context(|| format!("no notebooks/ folder in {}", root.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ipynb"))
        .filter(|p| p.file_stem().is_some_and(|s| s.to_string_lossy().starts_with(name.trim_end_matches(".ipynb"))))
        .collect();
    let [source] = generated.as_slice() else {
        let names: Vec<String> = generated.iter().map(|p| p.file_name().unwrap().to_string_lossy().into()).collect();
        bail!(
            "{name:?} names {} notebooks{}: give one of notebooks/*.ipynb, e.g. `anatomy notebooks reset 03`",
            names.len(),
            if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) }
        );
    };
    let mine = root.join("my-notebooks");
    std::fs::create_dir_all(&mine).with_context(|| format!("cannot create {}", mine.display()))?;
    let copy = mine.join(source.file_name().unwrap());
    if copy.exists() {
        let old = copy.with_extension("ipynb.old");
        std::fs::rename(&copy, &old).with_context(|| format!("cannot keep {} as {}", copy.display(), old.display()))?;
        println!("kept your copy as {}", old.display());
    }
    // Written beside, then renamed: never a half-written notebook.
    let partial = copy.with_extension("ipynb.partial");
    std::fs::copy(source, &partial).with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, &copy)?;
    println!("{} is as generated again (reload it in JupyterLab)", copy.display());
    Ok(())
}

/// The chapters with nbgrader solution cells, each with its text: the homework notebooks' sources.
fn homework_chapters(root: &Path) -> Result<Vec<(PathBuf, PathBuf, String)>> {
    let mut found = Vec::new();
    for (chapter, notebook) in chapter_notebooks(root)? {
        let markdown =
            std::fs::read_to_string(&chapter).with_context(|| format!("cannot read {}", chapter.display()))?;
        if let Some(e) = fence_errors(&markdown).first() {
            bail!("{}: {e}", chapter.display());
        }
        if chapter_cells(&markdown).iter().any(|c| matches!(c, Cell::Solution { .. })) {
            found.push((chapter, notebook, markdown));
        }
    }
    Ok(found)
}

/// Checks a homework chapter's cells against the course: every solution cell names an exercise and has a
/// check cell worth the exercise's points in `exercises/course.toml`.
fn check_cells(chapter: &Path, markdown: &str, course: Option<&Course>) -> Result<()> {
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
                "{}: check:{id} is worth {p} points, exercises/course.toml gives {}: make them agree",
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

fn release(root: &Path, out: Option<PathBuf>, in_place: bool) -> Result<()> {
    let chapters = homework_chapters(root)?;
    if chapters.is_empty() {
        bail!(
            "no chapter in {} has a solution cell (```rust solution:NAME): nothing to release",
            root.join("chapters").display()
        );
    }
    let course_file = root.join("exercises").join("course.toml");
    let course = if course_file.exists() { Some(Course::load(&course_file)?) } else { None };
    let out = out.unwrap_or_else(|| root.join("target").join("release-notebooks"));
    // Everything is made before anything is written: a chapter that cannot be released leaves no file.
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
    for (path, text) in writes {
        std::fs::create_dir_all(path.parent().expect("a folder"))
            .with_context(|| format!("cannot create {}", path.display()))?;
        anatomy_exercises::gradebook::write_whole(&path, &text)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// Exercise `e`'s solution cells in this project's homework chapters, as the grader makes them files:
/// as released (`todo!()`) and as solved. Base code for the similarity report.
pub fn solution_cell_files(e: &Exercise) -> Vec<String> {
    let root = PathBuf::from(env!("ANATOMY_PROJECT_ROOT"));
    let mut files = Vec::new();
    for (_, _, markdown) in homework_chapters(&root).unwrap_or_default() {
        let released = release_chapter(&markdown).unwrap_or_default();
        for text in [&markdown, &released] {
            for cell in chapter_cells(text) {
                if let Cell::Solution { id, code } = cell {
                    if id == e.name {
                        files.push(handin::cell_as_file(&code, e));
                    }
                }
            }
        }
    }
    files
}
