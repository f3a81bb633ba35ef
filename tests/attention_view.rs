//! Attention pictures: self-contained, well-formed, and drawing weights that are real probabilities.
mod common;

use tch::Device;
use transformer_anatomy::attention_view::{html_page, AttentionPicture, QueriesAndKeys};
use transformer_anatomy::charts::heatmap;
use transformer_anatomy::model_dir::resolve_model_dir;
use transformer_anatomy::{sinusoidal_positions, AttentionKind, BertModel};

const A: &str = "time flies like an arrow";
const B: &str = "fruit flies like a banana";

fn model() -> BertModel {
    BertModel::from_pretrained(resolve_model_dir(None).unwrap(), AttentionKind::Fused, Device::Cpu).unwrap()
}

fn picture() -> AttentionPicture {
    let (encoding, out) = model().encode_text(&common::tokenizer(), A, Some(B)).unwrap();
    let b_start = encoding.token_type_ids.iter().position(|&t| t == 1);
    assert_eq!(b_start, Some(7), "sentence B starts after [CLS] + 5 tokens + [SEP]");
    AttentionPicture::new(encoding.tokens, b_start, &out.attentions).unwrap()
}

#[test]
fn every_layer_and_head_sums_to_one_per_row() {
    let p = picture();
    assert_eq!((p.num_layers(), p.num_heads(), p.tokens.len()), (6, 12, 13));
    for (l, layer) in p.attentions.iter().enumerate() {
        for (h, head) in layer.iter().enumerate() {
            for (i, row) in head.iter().enumerate() {
                let sum: f32 = row.iter().sum();
                assert!((sum - 1.0).abs() < 1e-4, "layer {l} head {h} row {i} sums to {sum}");
            }
        }
    }
}

#[test]
fn the_head_view_is_well_formed_and_self_contained() {
    let p = picture();
    let html = html_page("head view", &p.head_view(0, 8).unwrap());
    common::html::assert_well_formed(&html);
    common::html::assert_self_contained(&html);
    assert!(html.contains("layer 0 · head 8") && html.contains(">banana<") && html.contains("sentence B"));
    // The embedded data carries every layer and head, rows summing to 1.
    let start = html.find(r#"class="anatomy-data">"#).unwrap() + r#"class="anatomy-data">"#.len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&html[start..end].replace("<\\/", "</")).unwrap();
    assert_eq!(data["attentions"].as_array().unwrap().len(), 6);
    assert_eq!(data["attentions"][5].as_array().unwrap().len(), 12);
    assert!(p.head_view(6, 0).is_err() && p.head_view(0, 12).is_err());
}

#[test]
fn the_model_and_neuron_views_are_well_formed() {
    let p = picture();
    let model_view = html_page("model view", &p.model_view());
    common::html::assert_well_formed(&model_view);
    common::html::assert_self_contained(&model_view);
    assert_eq!(model_view.matches("<svg").count(), 6 * 12, "one heatmap per layer and head");

    let encoding = common::tokenizer().encode_pair(A, B, true).unwrap();
    let (q, k) = model()
        .queries_and_keys(&encoding.ids_tensor(Device::Cpu), Some(&encoding.type_ids_tensor(Device::Cpu)), 0, 8)
        .unwrap();
    assert_eq!(q.size(), [1, 13, 32]);
    let qk = QueriesAndKeys::from_tensors(&q, &k).unwrap();
    // The scores rebuilt from these queries and keys give the head's weights (softmax of q·k/√d).
    let scores = q.matmul(&k.transpose(-2, -1)) / (32f64).sqrt();
    let weights = tch::Tensor::from_slice(&p.weights(0, 8).concat()).view([1, 13, 13]);
    common::assert_close(&scores.softmax(-1, tch::Kind::Float), &weights, 1e-5);
    let neuron = html_page("neuron view", &p.neuron_view(0, 8, 2, &qk).unwrap());
    common::html::assert_well_formed(&neuron);
    common::html::assert_self_contained(&neuron);
    assert!(neuron.contains("query token <b>flies</b>"));
    assert!(p.neuron_view(0, 8, 13, &qk).is_err());
}

#[test]
fn heatmaps_of_a_head_and_of_the_positional_encoding() {
    let pe = sinusoidal_positions(50, 32, Device::Cpu);
    let svg = heatmap("The sinusoidal encoding", ("dimension", "position"), &pe, None, None, false).unwrap();
    common::html::assert_well_formed(&svg);
    assert!(svg.matches("<rect").count() >= 50 * 32 + 64, "one cell per entry and the colour scale's bands");
    for text in ["The sinusoidal encoding", "dimension", "position"] {
        assert!(svg.contains(text), "no {text:?}");
    }
    // Signed data: blue below 0, orange above, white at 0 (the first position's sines are all 0).
    assert!(svg.contains(r##"fill="#2563EB""##) && svg.contains(r##"fill="#EA580C""##), "a diverging scale");
    assert!(heatmap(
        "x",
        ("a", "b"),
        &tch::Tensor::zeros([2, 2, 2], (tch::Kind::Float, Device::Cpu)),
        None,
        None,
        false
    )
    .is_err());
}

/// Ranking the heads by "flies" → "arrow": the order is by weight, the top weight is the largest entry
/// of any head, and layer 0 head 8 (the book's head) has its place in the list.
#[test]
fn heads_rank_by_how_much_one_token_attends_to_another() {
    let p = picture();
    let ranked = p.rank_heads("flies", "arrow").unwrap();
    assert_eq!(ranked.len(), 6 * 12);
    assert!(ranked.windows(2).all(|w| w[0].weight >= w[1].weight));
    let (flies, arrow) =
        (p.tokens.iter().position(|t| t == "flies").unwrap(), p.tokens.iter().position(|t| t == "arrow").unwrap());
    let top = ranked[0];
    assert!(
        (p.attentions[top.layer][top.head][flies][arrow] - top.weight).abs() < 1e-6
            || top.weight > p.attentions[top.layer][top.head][flies][arrow]
    );
    let book_head = ranked.iter().find(|s| s.layer == 0 && s.head == 8).unwrap();
    assert!(book_head.weight < top.weight, "MiniLM's layer 0 head 8 is not its strongest flies → arrow head");
    assert!(p.rank_heads("flies", "banana!").unwrap_err().to_string().contains("not one of the tokens"));
}

/// Every picture says what it shows: the head view its direction and weight scale, the model view its
/// axes, the neuron view which token it follows.
#[test]
fn every_view_has_its_headings() {
    let p = picture();
    let head = p.head_view(0, 8).unwrap();
    for heading in [
        "layer 0 · head 8",
        "attends from (query)",
        "to (key)",
        "weight",
        "sentence A",
        "sentence B",
        "hover over a token",
    ] {
        assert!(head.contains(heading), "the head view lacks {heading:?}");
    }
    assert!(
        head.contains(r#"data-from="0""#) && head.contains(r#"class="anatomy-from" data-i="2""#),
        "lines and tokens carry their index"
    );
    let model = p.model_view();
    for heading in ["Model view", "layer 5", "head 11", "queries", "keys"] {
        assert!(model.contains(heading), "the model view lacks {heading:?}");
    }
    let grid = transformer_anatomy::display::mask_grid(&transformer_anatomy::causal_mask(3, Device::Cpu));
    assert!(grid.contains("row = query position, column = key position"));
}
