//! The code cells of a handed-in notebook that the grader reads: nbgrader's solution cells.
//!
//! A notebook is JSON, read by serde_json into the few types below ([`crate::json`]): only the solution
//! cells are kept, and everything else is skipped as it is read, never built (15 MB of 1.5 million small
//! objects took 1.1 GiB as a `serde_json::Value`), so that a notebook costs its bytes and its solutions,
//! and it has at most [`MAX_CELLS`] cells. What is skipped is skipped by a loop, however deep it nests;
//! what is read nests five levels. What a cell holds is then code like any exercise file, measured by
//! [`crate::bounds`] when the rules read it.
use std::fmt;

use serde::de::{Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::json::{Lenient, Scalar};

/// The most cells a notebook may have: the book's longest chapter has 26, so a student's own cells fit
/// many times over, and a notebook of a million empty cells is refused while it is read.
pub const MAX_CELLS: usize = 4096;

/// The nbgrader solution cells of a notebook's bytes, as (`grade_id`, source): the cells whose metadata
/// says `"solution": true`. Nothing else of the notebook is kept, and nothing of it is run.
pub fn solution_cells(bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
    let notebook: Notebook = serde_json::from_slice(bytes).map_err(|e| match e.is_data() {
        true => format!("is not a notebook ({e})"),
        false => format!("is not a notebook (not JSON: {e})"),
    })?;
    notebook.cells.map(|c| c.0).ok_or_else(|| "is not a notebook (no cells)".into())
}

#[derive(Deserialize)]
struct Notebook {
    #[serde(default)]
    cells: Option<Solutions>,
}

/// The solution cells of the list `cells`, kept as they are read.
struct Solutions(Vec<(String, String)>);

impl<'de> Deserialize<'de> for Solutions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(SolutionsVisitor)
    }
}

struct SolutionsVisitor;

impl<'de> Visitor<'de> for SolutionsVisitor {
    type Value = Solutions;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of cells")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Solutions, A::Error> {
        let (mut count, mut kept) = (0, Vec::new());
        while let Some(Lenient(cell)) = seq.next_element::<Lenient<Cell>>()? {
            count += 1;
            if count > MAX_CELLS {
                return Err(A::Error::custom(format!(
                    "more than {MAX_CELLS} cells, the most the grader reads: hand in the released notebook"
                )));
            }
            if let Some(solution) = cell.and_then(Cell::solution) {
                kept.push(solution);
            }
        }
        Ok(Solutions(kept))
    }
}

#[derive(Deserialize)]
struct Cell {
    #[serde(default)]
    cell_type: Scalar,
    #[serde(default)]
    metadata: Lenient<Metadata>,
    #[serde(default)]
    source: Source,
}

impl Cell {
    fn solution(self) -> Option<(String, String)> {
        let nbgrader = self.metadata.0?.nbgrader.0?;
        let solution = self.cell_type.text() == Some("code") && nbgrader.solution == Scalar::Bool(true);
        let Scalar::Text(id) = nbgrader.grade_id else { return None };
        solution.then_some((id, self.source.0))
    }
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(default)]
    nbgrader: Lenient<Nbgrader>,
}

#[derive(Deserialize)]
struct Nbgrader {
    #[serde(default)]
    solution: Scalar,
    #[serde(default)]
    grade_id: Scalar,
}

/// A cell's source: its text, or its list of lines joined (what is not text in it is left out).
#[derive(Default)]
struct Source(String);

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SourceVisitor)
    }
}

struct SourceVisitor;

impl<'de> Visitor<'de> for SourceVisitor {
    type Value = Source;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a cell's source")
    }
    fn visit_str<E>(self, v: &str) -> Result<Source, E> {
        Ok(Source(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Source, E> {
        Ok(Source(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Source, A::Error> {
        let mut text = String::new();
        while let Some(line) = seq.next_element::<Scalar>()? {
            text += line.text().unwrap_or("");
        }
        Ok(Source(text))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Source, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Source::default())
    }
    fn visit_bool<E>(self, _: bool) -> Result<Source, E> {
        Ok(Source::default())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Source, E> {
        Ok(Source::default())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Source, E> {
        Ok(Source::default())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Source, E> {
        Ok(Source::default())
    }
    fn visit_unit<E>(self) -> Result<Source, E> {
        Ok(Source::default())
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn cell(kind: &str, metadata: &str, source: &str) -> String {
        format!(r#"{{"cell_type": "{kind}", "metadata": {metadata}, "source": {source}}}"#)
    }

    #[test]
    fn only_code_cells_nbgrader_marks_as_solutions_are_kept_whatever_else_the_notebook_holds() {
        let solution = |id: &str| format!(r#"{{"nbgrader": {{"solution": true, "grade_id": "{id}"}}, "x": [1]}}"#);
        let cells = [
            cell("code", &solution("a"), r#"["fn a() {\n", "}\n"]"#),
            cell("markdown", &solution("b"), r#""text""#),
            cell("code", r#"{"nbgrader": {"solution": "true", "grade_id": "c"}}"#, r#""no""#),
            cell("code", r#"{"nbgrader": {"solution": true, "grade_id": 4}}"#, r#""no""#),
            cell("code", r#"[1, 2]"#, r#""no""#),
            cell("code", &solution("e"), r#"["x", 5, {"y": 1}, "z"]"#),
            cell("code", &solution("f"), r#"{"a": 1}"#),
            "7".into(),
        ];
        let notebook = format!(r#"{{"metadata": {{"k": [{{}}]}}, "cells": [{}], "nbformat": 4}}"#, cells.join(", "));
        let kept = solution_cells(notebook.as_bytes()).unwrap();
        let kept: Vec<(&str, &str)> = kept.iter().map(|(id, s)| (id.as_str(), s.as_str())).collect();
        assert_eq!(kept, [("a", "fn a() {\n}\n"), ("e", "xz"), ("f", "")]);
        assert_eq!(solution_cells(b"{}").unwrap_err(), "is not a notebook (no cells)");
        assert!(solution_cells(b"{\"cells\": 5}").unwrap_err().starts_with("is not a notebook (invalid type"));
        assert!(solution_cells(b"{\"cells\": [").unwrap_err().starts_with("is not a notebook (not JSON: "));
    }

    #[test]
    fn a_notebook_of_very_many_cells_is_refused_and_deep_nesting_is_skipped_without_recursion() {
        let many = |n: usize| format!("{{\"cells\": [{}]}}", vec!["{\"a\": 0}"; n].join(","));
        assert_eq!(solution_cells(many(MAX_CELLS).as_bytes()).unwrap(), vec![]);
        let why = solution_cells(many(1_500_000).as_bytes()).unwrap_err();
        assert_eq!(
            why,
            "is not a notebook (more than 4096 cells, the most the grader reads: hand in the released notebook at \
             line 1 column 36884)"
        );
        let deep = format!(
            "{{\"cells\": [{}{}], \"x\": {}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000),
            "{\"a\":".repeat(100_000),
            "0".to_string() + &"}".repeat(100_000)
        );
        assert_eq!(solution_cells(deep.as_bytes()).unwrap(), vec![]);
    }
}
