//! Turns a chapter's literate Markdown (`chapters/NN-name.md`) into a Jupyter notebook for the evcxr
//! Rust kernel: prose becomes Markdown cells, each ` ```rust ` block a code cell, and a set-up cell that
//! brings in this crate and LibTorch comes first. The notebooks in `notebooks/` are generated this way
//! (`anatomy notebooks build`), and a test fails when a committed notebook's cell *sources* differ from
//! what the generator makes, so the two cannot drift. Outputs, execution counts and metadata are left
//! out of that comparison: a learner who runs and saves a notebook in Jupyter has changed nothing that
//! matters, and `notebooks build` leaves such a notebook alone.
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

/// The set-up cell's output: which LibTorch, on which device, which model the notebooks read, and what
/// Stop does.
pub fn ready_line() -> String {
    let lib = option_env!("ANATOMY_LIBTORCH_LIB").unwrap_or("");
    let version = std::fs::read_to_string(Path::new(lib).join("../build-version"))
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|_| "(version unknown)".into());
    let device = if tch::Cuda::is_available() { "CUDA" } else { "CPU" };
    let model = crate::model_dir::resolve_model_dir(None)
        .and_then(|dir| {
            let c = crate::config::BertConfig::from_file(&dir)?;
            let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Ok(format!(
                "{name} (hidden {}, {} heads, {} layers)",
                c.hidden_size, c.num_attention_heads, c.num_hidden_layers
            ))
        })
        .unwrap_or_else(|e| format!("missing ({e:#})"));
    format!(
        "ready: LibTorch {version} on the {device}, {} threads · model {model}\n{STOP_NOTE}",
        tch::get_num_threads()
    )
}

/// What the Stop button does in this kernel, printed under the ready line: evcxr answers an interrupt by
/// ending the Rust process that holds the notebook's variables (even when no cell runs) and starting a
/// fresh one, so the variables are gone; no evcxr setting keeps them.
pub const STOP_NOTE: &str = "note: Stop (■) restarts this kernel's Rust process and forgets every variable, \
even when no cell runs;\n      Run ▸ Run All Above Selected Cell brings them back.";

/// A notebook cell: Markdown or Rust source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    Markdown(String),
    Code(String),
}

/// Splits a chapter into cells: every ` ```rust ` fence is a code cell, the text around them Markdown.
pub fn chapter_cells(markdown: &str) -> Vec<Cell> {
    let mut cells = vec![];
    let mut text = String::new();
    let mut code: Option<String> = None;
    for line in markdown.lines() {
        match &mut code {
            Some(body) if line.trim_end() == "```" => {
                cells.push(Cell::Code(body.trim_end().to_string()));
                code = None;
            }
            Some(body) => {
                body.push_str(line);
                body.push('\n');
            }
            None if line.trim_end() == "```rust" => {
                if !text.trim().is_empty() {
                    cells.push(Cell::Markdown(text.trim().to_string()));
                }
                text.clear();
                code = Some(String::new());
            }
            None => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    if !text.trim().is_empty() {
        cells.push(Cell::Markdown(text.trim().to_string()));
    }
    cells
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
            Cell::Code(code) => json!({
                "cell_type": "code", "execution_count": null, "id": format!("cell-{i:02}"),
                "metadata": {}, "outputs": [], "source": source_lines(code)
            }),
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

/// The type and source of every cell of a notebook, in order: what [`drift`] compares.
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
            (cell["cell_type"].as_str().unwrap_or("").to_string(), source)
        })
        .collect())
}

/// Whether a notebook still matches its chapter, comparing cell types and sources only. `None` when it
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
