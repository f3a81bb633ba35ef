//! The rich display a notebook shows renders: tensors, configs, attention and masks, and the charts.
//! (That the notebooks are made from chapters/ and do not drift is tested in crates/notebooks/tests/.)
mod common;

use tch::{Device, Kind, Tensor};
use transformer_anatomy::display::{attention_heatmap, cross_attention_heatmap, mask_grid, transformer_families, Rich};
use transformer_anatomy::{causal_mask, BertConfig, EncoderOptions};

#[test]
fn rich_display_of_tensors_configs_attention_and_masks() {
    let t = Tensor::arange(12, (Kind::Float, Device::Cpu)).view([3, 4]);
    let html = t.to_html();
    assert!(html.contains("[3, 4]") && html.contains("Float") && html.contains("11.0000"), "{}", &*html);
    let big = Tensor::zeros([2, 20, 30], (Kind::Float, Device::Cpu)).to_html();
    assert!(big.contains('…') && big.contains('⋮'), "large tensors are cut to a window");

    let config = BertConfig::bert_base_uncased(EncoderOptions::book()).to_html();
    assert!(config.contains("<td") && config.contains("hidden_size") && config.contains("768"));

    let tokens: Vec<String> = ["time", "flies", "<b>"].iter().map(|s| s.to_string()).collect();
    let weights = Tensor::ones([3, 3], (Kind::Float, Device::Cpu)) / 3.0;
    let svg = attention_heatmap(&weights, &tokens, &tokens);
    assert!(svg.matches("<rect").count() >= 9, "one cell per weight, and the colour scale");
    assert!(svg.contains("flies") && svg.contains("&lt;b&gt;") && svg.contains("0.33"));
    for heading in ["Self-attention weights", "query: the token attending", "key: the token attended to"] {
        assert!(svg.contains(heading), "no {heading:?} in the heatmap");
    }
    // Causal weights: the masked (exactly 0) upper triangle is blank; a tiny unmasked weight still shows.
    let causal = Tensor::from_slice(&[1.0f32, 0.0, 0.0, 0.999, 0.001, 0.0, 0.2, 0.3, 0.5]).view([3, 3]);
    let svg_causal = attention_heatmap(&causal, &tokens, &tokens);
    assert_eq!(svg_causal.matches(">\n0.00\n</text>").count(), 1, "three masked cells blank, 0.001 shown");
    assert_eq!(svg_causal.matches(">\n1.00\n</text>").count(), 2, "1 and 0.999");
    // Cross-attention says which tokens are the decoder's (rows) and which the source's (columns).
    let source: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
    let cross = cross_attention_heatmap(&(Tensor::ones([3, 4], (Kind::Float, Device::Cpu)) / 4.0), &tokens, &source);
    for heading in ["Encoder-decoder attention", "target token (query)", "source token (key)"] {
        assert!(cross.contains(heading), "no {heading:?} in the cross-attention heatmap");
    }
    assert!(!cross.contains("Self-attention") && !cross.contains("the token attending"));
    assert!(cross.contains("><title>Encoder-decoder attention: each target row sums to 1 over the source</title>"));
    // No text under 12 px in either.
    assert_text_at_least_12_px(&svg);
    assert_text_at_least_12_px(&cross);

    let grid = mask_grid(&causal_mask(3, Device::Cpu));
    assert_eq!(grid.matches(">1</td>").count(), 6);
    assert_eq!(grid.matches(">0</td>").count(), 3);

    let families = transformer_families();
    // As complete as the book's tree.
    let book = "BERT DistilBERT RoBERTa XLM XLM-R ALBERT ELECTRA DeBERTa GPT CTRL GPT-2 GPT-3 GPT-Neo GPT-J \
                T5 BART M2M-100 BigBird";
    for model in book.split_whitespace() {
        assert!(families.contains(&format!("<b>{model}</b>")), "the family table lacks {model}");
    }
    for needle in ["encoder-decoder", "2017"] {
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
        // The title again as the picture's <title>, which the JupyterLab check reads (scripts/jupyterlab/).
        assert!(svg.contains(&format!("><title>{}</title>", texts[0])), "no <title> first in {}", &svg[..120]);
        for text in texts {
            assert!(
                svg.contains(&format!(">\n{text}\n</text>")) || svg.contains(&format!(">{text}</text>")),
                "no {text:?} in the chart"
            );
        }
        assert!(svg.matches("<text").count() >= 8, "ticks are labelled");
        assert_text_at_least_12_px(&svg);
    }
}

/// Every `font-size` in an SVG is at least 12 px (the pictures are drawn at the output area's width, so
/// this is the size a reader sees).
fn assert_text_at_least_12_px(svg: &str) {
    let sizes: Vec<f64> = svg
        .split("font-size=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().trim_end_matches("px").parse().unwrap())
        .collect();
    assert!(!sizes.is_empty());
    assert!(sizes.iter().all(|&px| px >= 12.0), "text smaller than 12 px: {sizes:?}");
}
