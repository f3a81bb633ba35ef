//! The code cells of a handed-in notebook that the grader reads: nbgrader's solution cells.
//!
//! A notebook is JSON, read by serde_json, whose parser stops at 128 levels of nesting (its default
//! recursion limit, kept on: this crate never enables `unbounded_depth`), so a notebook nested deeper is
//! refused with serde_json's own message, and what a cell holds is then code like any exercise file,
//! measured by [`crate::bounds`] when the rules read it.

/// The nbgrader solution cells of a notebook's bytes, as (`grade_id`, source): the cells whose metadata
/// says `"solution": true`. Nothing else of the notebook is looked at, and nothing of it is run.
pub fn solution_cells(bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
    let json: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("is not a notebook (not JSON: {e})"))?;
    let cells = json["cells"].as_array().ok_or("is not a notebook (no cells)")?;
    Ok(cells
        .iter()
        .filter(|c| c["cell_type"] == "code" && c["metadata"]["nbgrader"]["solution"] == true)
        .filter_map(|c| {
            let id = c["metadata"]["nbgrader"]["grade_id"].as_str()?.to_string();
            let source = match &c["source"] {
                serde_json::Value::Array(lines) => lines.iter().filter_map(|l| l.as_str()).collect(),
                serde_json::Value::String(text) => text.clone(),
                _ => String::new(),
            };
            Some((id, source))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notebook_nested_past_serde_jsons_limit_is_refused_with_its_message() {
        let deep = format!("{{\"cells\": {}{}}}", "[".repeat(200), "]".repeat(200));
        let why = solution_cells(deep.as_bytes()).unwrap_err();
        assert!(why.contains("recursion limit exceeded"), "{why}");
        let fine = format!("{{\"cells\": [], \"x\": {}{}}}", "[".repeat(100), "]".repeat(100));
        assert_eq!(solution_cells(fine.as_bytes()).unwrap(), vec![]);
    }
}
