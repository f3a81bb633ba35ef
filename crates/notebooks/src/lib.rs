//! Turns a chapter's literate Markdown (`chapters/NN-name.md`) into a Jupyter notebook for the evcxr
//! Rust kernel: prose becomes Markdown cells, each ` ```rust ` block a code cell, and a set-up cell that
//! brings in this crate and LibTorch comes first. The notebooks in `notebooks/` are generated this way
//! (`anatomy notebooks build`), and a test fails when a committed notebook's cell *sources* differ from
//! what the generator makes, so the two cannot drift. Outputs, execution counts and metadata are left
//! out of that comparison: a learner who runs and saves a notebook in Jupyter has changed nothing that
//! matters, and `notebooks build` leaves such a notebook alone.
//!
//! This crate is the notebooks' maker and reader, and no part of the chapter: it has no LibTorch, and the
//! learner's crate keeps only what a notebook's kernel runs (`transformer_anatomy::notebook::ready_line`,
//! which the set-up cell prints). The grader reads a homework chapter's solution cells with it, and
//! nbgrader's release (`anatomy_platforms::nbgrader`) cuts them with [`release_chapter`].
//!
//! A homework chapter, and so its notebook, shows the learner the task: its solution cell holds a
//! `todo!()` where the answer goes. The answer is the exercise's reference solution, `solutions/ID.rs`
//! (kept back from students), which [`source_chapter`] puts in, between nbgrader's markers, only for the
//! instructors' version (`anatomy notebooks release --source`).
//!
//! The chapters' headers are read here too: [`chapter_map()`] writes the README's chapter table, the
//! contributors' "The chapter, file by file" and src/lib.rs's module comments from them.
pub mod chapter_map;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::{json, Value};

/// The first code cell of every notebook.
pub const SETUP_CELL: &str = r#"// Set-up: this project's crate and LibTorch. The first run compiles them (a few minutes);
// later runs, and the other notebooks, reuse that build.
:dep transformer_anatomy = { path = "..", package = "transformer-anatomy" }
:dep tch = "=0.26.0"
use tch::nn::{self, Module, ModuleT};
use tch::{Device, Kind, Tensor};
use transformer_anatomy::display::Rich;
use transformer_anatomy::inspect::shape;
use transformer_anatomy::*;
tch::manual_seed(42);
println!("{}", notebook::ready_line());"#;

/// A notebook cell: Markdown or Rust source.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Markdown(String),
    Code(String),
    /// An nbgrader solution cell (fence ` ```rust solution:ID `): the code a student writes, with a
    /// `todo!()` where the answer goes in the chapter, and the reference between `// BEGIN SOLUTION` and
    /// `// END SOLUTION` in the instructors' version ([`source_chapter`]). Its `grade_id` is the exercise's
    /// name.
    Solution {
        id: String,
        code: String,
    },
    /// A locked nbgrader grade cell (fence ` ```rust check:ID points=P `): it checks solution `ID` in the
    /// kernel and is worth `P` points, as the exercise is in `exercises/course.toml`.
    Check {
        id: String,
        points: f64,
        code: String,
    },
}

impl Cell {
    /// The Rust source of a code cell of any kind.
    pub fn code(&self) -> Option<&str> {
        match self {
            Cell::Markdown(_) => None,
            Cell::Code(code) | Cell::Solution { code, .. } | Cell::Check { code, .. } => Some(code),
        }
    }

    /// The cell's nbgrader metadata (schema 3), for solution and check cells.
    pub fn nbgrader(&self) -> Option<Value> {
        match self {
            Cell::Solution { id, .. } => Some(json!({
                "grade": false, "grade_id": id, "locked": false, "schema_version": 3, "solution": true, "task": false
            })),
            Cell::Check { id, points, .. } => Some(json!({
                "grade": true, "grade_id": format!("check_{id}"), "locked": true, "points": points,
                "schema_version": 3, "solution": false, "task": false
            })),
            _ => None,
        }
    }
}

/// What a ` ```rust ` fence opens: a plain code cell, or an nbgrader solution or check cell (empty); an
/// error for a Rust fence whose words this module cannot read; `None` for any other line.
fn fence(line: &str) -> Option<Result<Cell, String>> {
    let info = line.trim_end().strip_prefix("```rust")?;
    if !info.is_empty() && !info.starts_with(' ') {
        return None; // ```rusty or the like: another language
    }
    let words: Vec<&str> = info.split_whitespace().collect();
    Some(match words.as_slice() {
        [] => Ok(Cell::Code(String::new())),
        [role] if role.starts_with("solution:") => {
            Ok(Cell::Solution { id: role["solution:".len()..].to_string(), code: String::new() })
        }
        [role, points] if role.starts_with("check:") => match points.strip_prefix("points=").map(str::parse::<f64>) {
            Some(Ok(points)) => Ok(Cell::Check { id: role["check:".len()..].to_string(), points, code: String::new() }),
            _ => Err(format!("{line:?}: write the points as `points=N`")),
        },
        _ => Err(format!("{line:?}: a Rust fence is ```rust, ```rust solution:ID or ```rust check:ID points=N")),
    })
}

/// Splits a chapter into cells: every ` ```rust ` fence is a code cell (a solution or check cell when its
/// fence says so), the text around them Markdown. A fence that cannot be read stays text (see
/// [`fence_errors`]).
pub fn chapter_cells(markdown: &str) -> Vec<Cell> {
    let mut cells = vec![];
    let mut text = String::new();
    let mut open: Option<(Cell, String)> = None;
    for line in markdown.lines() {
        match &mut open {
            Some(_) if line.trim_end() == "```" => {
                let (cell, body) = open.take().expect("a cell is open");
                let code = body.trim_end().to_string();
                cells.push(match cell {
                    Cell::Solution { id, .. } => Cell::Solution { id, code },
                    Cell::Check { id, points, .. } => Cell::Check { id, points, code },
                    _ => Cell::Code(code),
                });
            }
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => match fence(line) {
                Some(Ok(cell)) => {
                    if !text.trim().is_empty() {
                        cells.push(Cell::Markdown(text.trim().to_string()));
                    }
                    text.clear();
                    open = Some((cell, String::new()));
                }
                _ => {
                    text.push_str(line);
                    text.push('\n');
                }
            },
        }
    }
    if !text.trim().is_empty() {
        cells.push(Cell::Markdown(text.trim().to_string()));
    }
    cells
}

/// The Rust fences of a chapter that cannot be read (a typo in `solution:` or `check:`), one line each.
pub fn fence_errors(markdown: &str) -> Vec<String> {
    markdown.lines().filter_map(fence).filter_map(Result::err).collect()
}

/// The students' version of a chapter: each `// BEGIN SOLUTION` … `// END SOLUTION` region of a solution
/// cell becomes `todo!()` at the marker's indentation, as nbgrader's `ClearSolutions` does with
/// `code_stub = {"rust": "todo!()"}`. A marker outside a solution cell, a region inside another or one
/// never closed is an error, as in nbgrader.
pub fn release_chapter(markdown: &str) -> Result<String> {
    let mut out = String::new();
    let (mut in_code, mut in_solution_cell, mut in_region) = (false, false, false);
    for (n, line) in markdown.lines().enumerate() {
        if !in_code {
            if let Some(Ok(cell)) = fence(line) {
                (in_code, in_solution_cell) = (true, matches!(cell, Cell::Solution { .. }));
            }
        } else if line.trim_end() == "```" {
            anyhow::ensure!(!in_region, "line {}: the solution cell ends inside its solution region", n + 1);
            in_code = false;
        }
        if line.contains("BEGIN SOLUTION") {
            anyhow::ensure!(in_code && in_solution_cell, "line {}: BEGIN SOLUTION outside a solution cell", n + 1);
            anyhow::ensure!(!in_region, "line {}: BEGIN SOLUTION inside another solution region", n + 1);
            in_region = true;
            let indent = &line[..line.len() - line.trim_start().len()];
            out += &format!("{indent}todo!()\n");
        } else if line.contains("END SOLUTION") {
            anyhow::ensure!(in_region, "line {}: END SOLUTION without its BEGIN SOLUTION", n + 1);
            in_region = false;
        } else if !in_region {
            out += line;
            out.push('\n');
        }
    }
    anyhow::ensure!(!in_region, "a BEGIN SOLUTION region is never closed");
    Ok(out)
}

/// The instructors' version of a chapter, for nbgrader's `source/` and for running its checks to a pass:
/// each solution cell `ID` that holds no solution region has its one `todo!()` line (the task as the
/// learner's chapter shows it) replaced by the body of function `ID` in `solutions/ID.rs`, between
/// `// BEGIN SOLUTION` and `// END SOLUTION` at the `todo!()`'s indentation. The reference solution is so
/// kept in one file, kept back from students, and [`release_chapter`] cuts this version back to the
/// chapter. A cell with no `todo!()`, or more than one, and a missing solution file are errors.
pub fn source_chapter(markdown: &str, solutions: &Path) -> Result<String> {
    let mut out = String::new();
    let mut cell: Option<(String, Vec<&str>)> = None; // an open solution cell: its id and lines
    for line in markdown.lines() {
        match &mut cell {
            Some(_) if line.trim_end() == "```" => {
                let (id, lines) = cell.take().expect("a cell is open");
                out += &filled_cell(&id, &lines, solutions)?;
            }
            Some((_, lines)) => {
                lines.push(line);
                continue;
            }
            None => {
                if let Some(Ok(Cell::Solution { id, .. })) = fence(line) {
                    cell = Some((id, vec![]));
                }
            }
        }
        out += line;
        out.push('\n');
    }
    anyhow::ensure!(cell.is_none(), "a solution cell is never closed");
    Ok(out)
}

/// A solution cell's lines, its `todo!()` filled in with the reference solution (see [`source_chapter`]).
fn filled_cell(id: &str, lines: &[&str], solutions: &Path) -> Result<String> {
    let mut out = String::new();
    if lines.iter().any(|l| l.contains("BEGIN SOLUTION")) {
        lines.iter().for_each(|l| out += &format!("{l}\n"));
        return Ok(out);
    }
    let todos = lines.iter().filter(|l| l.trim() == "todo!()").count();
    anyhow::ensure!(todos == 1, "the solution cell {id} has {todos} `todo!()` lines: it needs one, for its solution");
    let file = solutions.join(format!("{id}.rs"));
    let text = std::fs::read_to_string(&file).with_context(|| {
        format!("cannot read {}: the instructors' version is made from the reference solutions", file.display())
    })?;
    let body = function_body(&text, id).with_context(|| format!("{} has no function `{id}`", file.display()))?;
    for line in lines {
        if line.trim() != "todo!()" {
            out += &format!("{line}\n");
            continue;
        }
        let indent = &line[..line.len() - line.trim_start().len()];
        out += &format!("{indent}// BEGIN SOLUTION\n");
        for l in &body {
            out += &if l.trim().is_empty() { "\n".to_string() } else { format!("{indent}{l}\n") };
        }
        out += &format!("{indent}// END SOLUTION\n");
    }
    Ok(out)
}

/// The body of function `name` in a Rust file as rustfmt writes it: the lines after the line that opens
/// its body (the first ending in `{` from its `fn name(`) up to its closing `}` at the start of a line,
/// less their common indentation.
fn function_body(text: &str, name: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    let signature = format!("fn {name}(");
    let start = lines.iter().position(|l| l.trim_start().trim_start_matches("pub ").starts_with(&signature))?;
    let open = start + lines[start..].iter().position(|l| l.trim_end().ends_with('{'))?;
    let close = open + 1 + lines[open + 1..].iter().position(|l| l.trim_end() == "}")?;
    let body = &lines[open + 1..close];
    let indent =
        body.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    Some(body.iter().map(|l| l.get(indent..).unwrap_or("").trim_end().to_string()).collect())
}

fn source_lines(source: &str) -> Value {
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    json!(lines)
}

/// The notebook (nbformat 4.5, no outputs) for a chapter's Markdown, as pretty-printed JSON.
pub fn notebook_json(markdown: &str) -> String {
    let mut cells = vec![Cell::Code(SETUP_CELL.to_string())];
    cells.extend(chapter_cells(markdown));
    let cells: Vec<Value> = cells
        .iter()
        .enumerate()
        .map(|(i, cell)| match cell {
            Cell::Markdown(text) => {
                json!({"cell_type": "markdown", "id": format!("cell-{i:02}"), "metadata": {}, "source": source_lines(text)})
            }
            code => {
                // As nbgrader's LockCells leaves them: no solution or check cell can be deleted, and a
                // locked one cannot be edited, in JupyterLab.
                let metadata = match code.nbgrader() {
                    Some(n) if n["locked"] == true => json!({"deletable": false, "editable": false, "nbgrader": n}),
                    Some(n) => json!({"deletable": false, "nbgrader": n}),
                    None => json!({}),
                };
                json!({
                    "cell_type": "code", "execution_count": null, "id": format!("cell-{i:02}"),
                    "metadata": metadata, "outputs": [], "source": source_lines(code.code().expect("a code cell"))
                })
            }
        })
        .collect();
    let notebook = json!({
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Rust", "language": "rust", "name": "rust"},
            "language_info": {"codemirror_mode": "rust", "file_extension": ".rs", "mimetype": "text/rust", "name": "Rust", "pygment_lexer": "rust", "version": ""}
        },
        "nbformat": 4,
        "nbformat_minor": 5
    });
    serde_json::to_string_pretty(&notebook).expect("a notebook serializes") + "\n"
}

/// The chapters whose notebook is missing or whose cells differ from what the chapter makes: (chapter,
/// notebook, what differs), for `anatomy notebooks build` to write or, with `--check`, to list.
pub fn stale_notebooks(root: &Path) -> Result<Vec<(PathBuf, PathBuf, String)>> {
    let mut stale = vec![];
    for (chapter, notebook) in chapter_notebooks(root)? {
        let markdown =
            std::fs::read_to_string(&chapter).with_context(|| format!("cannot read {}", chapter.display()))?;
        let difference = match std::fs::read_to_string(&notebook) {
            Ok(text) => drift(&markdown, &text).unwrap_or_else(|e| Some(format!("{e:#}"))),
            Err(_) => Some("missing".to_string()),
        };
        if let Some(difference) = difference {
            stale.push((chapter, notebook, difference));
        }
    }
    Ok(stale)
}

/// `anatomy notebooks build`: writes every notebook whose cells differ from its chapter's, or with `check`
/// only names them. Returns the notebooks written and those named (with what differs).
pub fn build(root: &Path, check: bool) -> Result<(Vec<PathBuf>, Vec<String>)> {
    let (mut written, mut stale) = (vec![], vec![]);
    for (chapter, notebook, difference) in stale_notebooks(root)? {
        if check {
            stale.push(format!("{} ({difference})", notebook.display()));
        } else {
            write_notebook(&chapter, &notebook)?;
            written.push(notebook);
        }
    }
    Ok((written, stale))
}

/// `anatomy notebooks chapter-map`: writes (`write`, each whole) every copy of the chapter map that differs
/// from what the chapters' headers make ([`chapter_map::stale`]), or only names them; returns them.
pub fn chapter_map(root: &Path, write: bool) -> Result<Vec<PathBuf>> {
    let stale = chapter_map::stale(root).map_err(anyhow::Error::msg)?;
    if write {
        for (path, text) in &stale {
            anatomy_course::write_whole(path, text)?;
        }
    }
    Ok(stale.into_iter().map(|(path, _)| path).collect())
}

/// Writes the notebook a chapter makes.
pub fn write_notebook(chapter: &Path, notebook: &Path) -> Result<()> {
    let markdown = std::fs::read_to_string(chapter).with_context(|| format!("cannot read {}", chapter.display()))?;
    std::fs::write(notebook, notebook_json(&markdown)).with_context(|| format!("cannot write {}", notebook.display()))
}

/// Copies `notebooks/NAME.ipynb` (NAME: a unique start of one, e.g. `03`) over the learner's working copy
/// `my-notebooks/NAME.ipynb`, keeping an existing copy as `NAME.ipynb.old`; the new copy is written
/// beside and renamed, never half-written. Returns the copy and, if one was kept, the old one.
pub fn reset_copy(root: &Path, name: &str) -> Result<(PathBuf, Option<PathBuf>)> {
    let generated: Vec<PathBuf> = std::fs::read_dir(root.join("notebooks"))
        .with_context(|| format!("no notebooks/ folder in {}", root.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ipynb"))
        .filter(|p| p.file_stem().is_some_and(|s| s.to_string_lossy().starts_with(name.trim_end_matches(".ipynb"))))
        .collect();
    let [source] = generated.as_slice() else {
        let names: Vec<String> = generated.iter().map(|p| p.file_name().unwrap().to_string_lossy().into()).collect();
        anyhow::bail!(
            "{name:?} names {} notebooks{}: give one of notebooks/*.ipynb, e.g. `cargo anatomy notebooks reset 03`",
            names.len(),
            if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) }
        );
    };
    let mine = root.join("my-notebooks");
    std::fs::create_dir_all(&mine).with_context(|| format!("cannot create {}", mine.display()))?;
    let copy = mine.join(source.file_name().expect("a file"));
    let mut kept = None;
    if copy.exists() {
        let old = copy.with_extension("ipynb.old");
        std::fs::rename(&copy, &old).with_context(|| format!("cannot keep {} as {}", copy.display(), old.display()))?;
        kept = Some(old);
    }
    let partial = copy.with_extension("ipynb.partial");
    std::fs::copy(source, &partial).with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, &copy)?;
    Ok((copy, kept))
}

/// Every chapter file and the notebook it becomes: `chapters/NN-name.md` → `notebooks/NN-name.ipynb`.
pub fn chapter_notebooks(root: &Path) -> Result<Vec<(PathBuf, PathBuf)>> {
    let chapters = root.join("chapters");
    let mut pairs = vec![];
    for entry in std::fs::read_dir(&chapters).with_context(|| format!("reading {}", chapters.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "md") {
            let stem = path.file_stem().unwrap().to_string_lossy().to_string();
            pairs.push((path, root.join("notebooks").join(format!("{stem}.ipynb"))));
        }
    }
    pairs.sort();
    Ok(pairs)
}

/// The type (with its nbgrader role, if any) and source of every cell of a notebook, in order: what
/// [`drift`] compares.
pub fn cell_sources(notebook: &str) -> Result<Vec<(String, String)>> {
    let json: Value = serde_json::from_str(notebook).context("the notebook is not valid JSON")?;
    let cells = json["cells"].as_array().context("the notebook has no cells")?;
    Ok(cells
        .iter()
        .map(|cell| {
            let source = match &cell["source"] {
                Value::Array(lines) => lines.iter().filter_map(Value::as_str).collect(),
                Value::String(text) => text.clone(),
                _ => String::new(),
            };
            // A solution or check cell's role is part of its type: nbgrader's metadata, less what
            // `nbgrader generate_assignment` or our release adds (checksums).
            let mut kind = cell["cell_type"].as_str().unwrap_or("").to_string();
            if let Some(Value::Object(nbgrader)) = cell["metadata"].get("nbgrader") {
                let mut role = nbgrader.clone();
                role.remove("checksum");
                role.remove("cell_type");
                kind += &format!(" (nbgrader {})", Value::Object(role));
            }
            (kind, source)
        })
        .collect())
}

/// Whether a notebook still matches its chapter, comparing cell types, nbgrader roles and sources only. `None` when it
/// does; otherwise what differs, naming the first differing cell (1-based, the set-up cell first).
pub fn drift(chapter_markdown: &str, notebook: &str) -> Result<Option<String>> {
    let wanted = cell_sources(&notebook_json(chapter_markdown))?;
    let found = cell_sources(notebook)?;
    for (i, (w, f)) in wanted.iter().zip(&found).enumerate() {
        if w != f {
            let line =
                w.1.lines()
                    .zip(f.1.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or_else(|| w.1.lines().count().min(f.1.lines().count()));
            let nth = |s: &str| s.lines().nth(line).unwrap_or("(nothing)").chars().take(60).collect::<String>();
            return Ok(Some(format!(
                "cell {} ({} in the chapter, {} in the notebook) differs at its line {}: the chapter has {:?}, the notebook {:?}",
                i + 1,
                w.0,
                f.0,
                line + 1,
                nth(&w.1),
                nth(&f.1)
            )));
        }
    }
    if wanted.len() != found.len() {
        return Ok(Some(format!("the chapter makes {} cells, the notebook has {}", wanted.len(), found.len())));
    }
    Ok(None)
}
