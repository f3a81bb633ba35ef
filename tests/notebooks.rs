//! The notebooks are generated from chapters/ and must not drift; the rich display renders.
mod common;

use std::path::Path;

use tch::{Device, Kind, Tensor};
use transformer_anatomy::display::{attention_heatmap, mask_grid, transformer_families, Rich};
use transformer_anatomy::notebook::{chapter_cells, chapter_notebooks, drift, notebook_json, Cell, SETUP_CELL};
use transformer_anatomy::{causal_mask, BertConfig};

#[test]
fn every_chapter_has_its_notebook_and_they_are_in_sync() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pairs = chapter_notebooks(root).unwrap();
    assert_eq!(pairs.len(), 10, "one notebook per chapter section");
    for (chapter, notebook) in pairs {
        let committed = std::fs::read_to_string(&notebook).unwrap_or_default();
        let markdown = std::fs::read_to_string(&chapter).unwrap();
        if let Some(difference) = drift(&markdown, &committed).unwrap() {
            panic!("{} is out of date ({difference}): run `cargo run -- notebooks build`", notebook.display());
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

#[test]
fn rich_display_of_tensors_configs_attention_and_masks() {
    let t = Tensor::arange(12, (Kind::Float, Device::Cpu)).view([3, 4]);
    let html = t.to_html();
    assert!(html.contains("[3, 4]") && html.contains("Float") && html.contains("11.0000"), "{}", &*html);
    let big = Tensor::zeros([2, 20, 30], (Kind::Float, Device::Cpu)).to_html();
    assert!(big.contains('…') && big.contains('⋮'), "large tensors are cut to a window");

    let config = BertConfig::bert_base_uncased().to_html();
    assert!(config.contains("<td") && config.contains("hidden_size") && config.contains("768"));

    let tokens: Vec<String> = ["time", "flies", "<b>"].iter().map(|s| s.to_string()).collect();
    let weights = Tensor::ones([3, 3], (Kind::Float, Device::Cpu)) / 3.0;
    let svg = attention_heatmap(&weights, &tokens, &tokens);
    assert!(svg.matches("<rect").count() >= 9, "one cell per weight, and the colour scale");
    assert!(svg.contains("flies") && svg.contains("&lt;b&gt;") && svg.contains("0.33"));
    for heading in ["Attention weights", "query: the token attending", "key: the token attended to"] {
        assert!(svg.contains(heading), "no {heading:?} in the heatmap");
    }

    let grid = mask_grid(&causal_mask(3, Device::Cpu));
    assert_eq!(grid.matches(">1</td>").count(), 6);
    assert_eq!(grid.matches(">0</td>").count(), 3);

    let families = transformer_families();
    for needle in ["BERT", "GPT", "T5", "encoder-decoder", "2017"] {
        assert!(families.contains(needle), "the family table lists {needle}");
    }
}

/// A picture without a title and labelled axes is not done: every chart carries both, as SVG text.
#[test]
fn charts_have_titles_axis_labels_and_legends() {
    use transformer_anatomy::charts::{bar_chart, line_chart, Series};
    let curve = Series { name: "warm-up", points: (1..100).map(|s| (s as f64, (s as f64).sqrt())).collect() };
    let line = line_chart("The schedule", "step", "learning rate", &[curve]);
    let bars = bar_chart("Six words", "word", "probability", &["a", "am", "i"], &[("target", vec![0.0, 0.0, 1.0])]);
    for (svg, texts) in [
        (line, ["The schedule", "step", "learning rate", "warm-up"]),
        (bars, ["Six words", "word", "probability", "target"]),
    ] {
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        for text in texts {
            assert!(
                svg.contains(&format!(">\n{text}\n</text>")) || svg.contains(&format!(">{text}</text>")),
                "no {text:?} in the chart"
            );
        }
        assert!(svg.matches("<text").count() >= 8, "ticks are labelled");
    }
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
