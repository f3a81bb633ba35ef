//! `anatomy attention` and `anatomy encode`: the pictures and vectors of chapter 9 from the command line.
#[path = "../../../tests/common/mod.rs"]
mod common;

use std::process::Command;

const A: &str = "time flies like an arrow";
const B: &str = "fruit flies like a banana";

fn anatomy(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_anatomy")).args(args).output().unwrap()
}

#[test]
fn the_attention_command_prints_json_and_writes_pictures() {
    let o = anatomy(&["attention", "--layer", "0", "--head", "8", "--json", A, B]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["layer"].as_u64(), v["head"].as_u64()), (Some(0), Some(8)));
    assert_eq!(v["tokens"].as_array().unwrap().len(), 13);
    for row in v["weights"].as_array().unwrap() {
        let sum: f64 = row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).sum();
        assert!((sum - 1.0).abs() < 1e-4);
    }
    let dir = common::TestDir::new("attention");
    for view in ["head", "model", "neuron"] {
        let file = dir.join(format!("{view}.html"));
        let o =
            anatomy(&["attention", "--view", view, "--layer", "0", "--head", "8", "-o", file.to_str().unwrap(), A, B]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let html = std::fs::read_to_string(&file).unwrap();
        common::html::assert_well_formed(&html);
        common::html::assert_self_contained(&html);
    }
    let o = anatomy(&["attention", "--layer", "9", A]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("layer 9 does not exist: choose 0..5"));
}

#[test]
fn the_encode_command_prints_hidden_states_and_the_sentence_embedding() {
    let o = anatomy(&["encode", "--json", A]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["tokens"], serde_json::json!(["[CLS]", "time", "flies", "like", "an", "arrow", "[SEP]"]));
    let hidden = v["last_hidden_state"].as_array().unwrap();
    assert_eq!((hidden.len(), hidden[0].as_array().unwrap().len()), (7, 384));
    let embedding: Vec<f64> = v["sentence_embedding"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    let norm = embedding.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!((norm - 1.0).abs() < 1e-5, "the sentence embedding has length 1, got {norm}");
}
