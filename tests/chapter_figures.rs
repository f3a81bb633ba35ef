//! Figures that a chapter's prose quotes from the real checkpoint, held to what the model computes: if a
//! new checkpoint, tokenizer or attention path moved one, the sentence that quotes it would be false.
//! The reference is the MiniLM folder that `make setup` fills (nothing is fetched here).
mod common;

use tch::Device;
use transformer_anatomy::model_dir::resolve_model_dir;
use transformer_anatomy::{AttentionKind, BertModel};

/// Chapter 02's trained head (under "A trained head, through the same steps"): in MiniLM's layer 0, head 8
/// (the book's head), "flies" gives 0.57 of its weight to `[CLS]` and 0.04 to "arrow" in "time flies like
/// an arrow"; the first line of that cell's output gives the two with two decimals, and the chapter's
/// check comment expects that line.
#[test]
fn chapter_02_flies_in_minilm_layer_0_head_8() {
    let _generator = common::generator();
    let dir = resolve_model_dir(None).expect("the model folder is missing: run `make setup`");
    let minilm = BertModel::from_pretrained(dir, AttentionKind::Fused, Device::Cpu).unwrap();
    let (encoding, out) = minilm.encode_text(&common::tokenizer(), "time flies like an arrow", None).unwrap();
    assert_eq!(encoding.tokens, ["[CLS]", "time", "flies", "like", "an", "arrow", "[SEP]"]);
    let weight = |to: usize| out.attentions[0].double_value(&[0, 8, 2, to as i64]);
    let (cls, arrow) = (weight(0), weight(5));
    assert_eq!(format!("{cls:.2} {arrow:.2}"), "0.57 0.04", "[CLS] {cls}, arrow {arrow}");
    // Neither sits within float noise of a rounding boundary (0.575 is 8e-5 away), so the printed line
    // does not flip with the last bits of another CPU's arithmetic.
    assert!((cls - 0.575).abs() > 5e-5 && (arrow - 0.035).abs() > 1e-3, "[CLS] {cls}, arrow {arrow}");
}
