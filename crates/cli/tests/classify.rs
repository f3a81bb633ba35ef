//! Chapter 12's data through the binary: `anatomy classify prepare` on the corpus `make setup` fetched —
//! the counts pinned, copies dropped before the split, the split seeded, stratified and disjoint.
#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;

use std::collections::{BTreeMap, HashSet};
use std::process::Command;

use serde_json::Value;
use test_dir::TestDir;
use transformer_anatomy::classify::data::{data_dir, read_examples, Part};
use transformer_anatomy::classify::frozen::{HeadConfig, TrainedHead};

fn prepare(dir: &std::path::Path) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["classify", "prepare", "--json", "--dir", dir.to_str().unwrap()])
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn the_corpus_becomes_5916_examples_in_one_seeded_stratified_split() {
    let dir = TestDir::new("spam");
    std::fs::copy(data_dir().join("raw.jsonl"), dir.join("raw.jsonl")).expect("make setup fetches the corpus");
    let (code, out, err) = prepare(&dir);
    assert_eq!(code, Some(0), "{err}");
    let counts: Value = serde_json::from_str(&out).unwrap();
    let raw: BTreeMap<String, u64> = serde_json::from_value(counts["raw"].clone()).unwrap();
    let expected: BTreeMap<String, u64> =
        [("easy-ham-1", 2500), ("easy-ham-2", 1400), ("hard-ham-1", 250), ("spam-1", 500), ("spam-2", 1396)]
            .map(|(g, n)| (g.to_string(), n))
            .into();
    assert_eq!(raw, expected);
    assert_eq!(counts["duplicates"], 130, "messages whose Subject and body repeat an earlier one's");
    assert_eq!(counts["parts"]["train"], serde_json::json!([3286, 1446]));
    assert_eq!(counts["parts"]["validation"], serde_json::json!([411, 181]));
    assert_eq!(counts["parts"]["test"], serde_json::json!([411, 181]));

    let examples = read_examples(&dir.join("examples.jsonl")).unwrap();
    assert_eq!(examples.len(), 5916);
    // Every id once; the label is the group's; no text (Subject and body) in two examples, so none in
    // two parts; only the Subject of the headers is kept.
    let ids: HashSet<&str> = examples.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids.len(), examples.len());
    let texts: HashSet<(&str, &str)> = examples.iter().map(|e| (e.subject.as_str(), e.body.as_str())).collect();
    assert_eq!(texts.len(), examples.len(), "a copy survived");
    for e in &examples {
        assert_eq!(e.label, usize::from(e.group.starts_with("spam")), "{}", e.id);
        assert!(e.id.starts_with(&format!("{}/", e.group)));
        assert!(!e.subject.contains('\n') && !e.body.contains('\n'), "whitespace is squeezed: {}", e.id);
    }
    // The headers are gone: 3,277 raw messages carry a mailing list's List-Id or List-Unsubscribe header;
    // in the examples those words are left only where a body quotes a forwarded message (6).
    let list_headers = examples.iter().filter(|e| e.body.contains("List-Unsubscribe:") || e.body.contains("List-Id:"));
    assert!(list_headers.count() <= 6);
    let forwarded = examples.iter().filter(|e| e.body.starts_with("Return-Path:") || e.body.starts_with("Received:"));
    assert!(forwarded.count() <= 1, "a body starts with the headers it should have lost");
    // The hard-ham slice is in every part.
    for part in [Part::Train, Part::Validation, Part::Test] {
        assert!(examples.iter().any(|e| e.part == part && e.group == "hard-ham-1"), "{part:?}");
    }
    // Written once, the same every time: a second run gives the same file, byte for byte.
    let first = std::fs::read(dir.join("examples.jsonl")).unwrap();
    assert_eq!(prepare(&dir).0, Some(0));
    assert_eq!(std::fs::read(dir.join("examples.jsonl")).unwrap(), first);
}

#[test]
fn a_missing_corpus_names_make_setup() {
    let dir = TestDir::new("spam-missing");
    let (code, _, err) = prepare(&dir);
    assert_eq!(code, Some(1));
    assert!(err.contains("run `make setup`") && err.trim().lines().count() == 1, "{err}");
    assert!(!dir.join("examples.jsonl").exists());
}

fn train(dir: &std::path::Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["classify", "train", "--json", "--dir", dir.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// The head on the frozen body, on a fixed small subset (200 messages of each part, 64 tokens): it
/// learns (test accuracy well above the 69 % of always saying ham), and a second run reads the body's
/// features from the cache and gives the same figures.
#[test]
fn the_frozen_head_learns_on_a_small_subset_and_the_features_are_cached() {
    let dir = TestDir::new("spam-frozen");
    std::fs::copy(data_dir().join("raw.jsonl"), dir.join("raw.jsonl")).expect("make setup fetches the corpus");
    let head = dir.join("head.safetensors");
    let args = ["--limit", "200", "--max-len", "64", "--pooling", "mean", "--out", head.to_str().unwrap()];
    let (code, out, err) = train(&dir, &args);
    assert_eq!(code, Some(0), "{err}");
    let first: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((first["train"].as_u64(), first["features_cached"].as_bool()), (Some(200), Some(false)));
    let test = &first["test"];
    let confusion: Vec<u64> = test["confusion"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()))
        .collect();
    assert_eq!(confusion.iter().sum::<u64>(), 200);
    let majority = (confusion[0] + confusion[1]) as f64 / 200.0;
    assert!(test["accuracy"].as_f64().unwrap() >= 0.80 && majority < 0.75, "{test}");
    assert!(test["f1"].as_f64().unwrap() >= 0.65, "{test}");
    let curve = first["curve"].as_array().unwrap();
    assert!(curve.last().unwrap()["train_loss"].as_f64() < curve[0]["train_loss"].as_f64(), "the loss falls");
    let (code, out, _) = train(&dir, &args);
    assert_eq!(code, Some(0));
    let second: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(second["features_cached"], true);
    assert_eq!(second["test"], first["test"], "the same seed and features give the same head");
    // The saved head labels new texts: one JSON object per text, the label's probability above one half.
    let predict = |extra: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_anatomy"))
            .args(["classify", "predict", head.to_str().unwrap(), "--json"])
            .args(extra)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, out, err) =
        predict(&["WIN A FREE CRUISE!!! Click here to claim your prize now", "Re: patch for the build"]);
    assert_eq!(code, Some(0), "{err}");
    let answers: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), 2);
    for a in &answers {
        let p = a["probability"].as_f64().unwrap();
        assert!(["ham", "spam"].contains(&a["label"].as_str().unwrap()) && (0.5..=1.0).contains(&p), "{a}");
    }
    assert_eq!(answers[0]["label"], "spam", "{out}");
    // Bad input: a text with no tokens, an empty file, a file that is not UTF-8, a file that is no head.
    let (empty, latin) = (dir.join("empty.txt"), dir.join("latin1.txt"));
    std::fs::write(&empty, "").unwrap();
    std::fs::write(&latin, b"caf\xe9").unwrap();
    for (extra, says) in [
        (vec!["   "], "has no tokens"),
        (vec!["--file", empty.to_str().unwrap()], "is empty"),
        (vec!["--file", latin.to_str().unwrap()], "is not UTF-8"),
    ] {
        let (code, _, err) = predict(&extra);
        assert_eq!(code, Some(1), "{extra:?}");
        assert!(err.contains(says) && err.trim().lines().count() == 1, "{err}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["classify", "predict", dir.join("raw.jsonl").to_str().unwrap(), "hello"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a readable checkpoint"));
    // What predict says mattered: at most five tokens, each one of the text's own word pieces.
    let (_, out, _) = predict(&["WIN A FREE CRUISE!!! Click here to claim your prize now"]);
    let tokens = serde_json::from_str::<Value>(&out).unwrap()["tokens"].as_array().unwrap().clone();
    assert!((1..=5).contains(&tokens.len()), "{out}");
    let known = ["win", "a", "free", "cruise", "!", "click", "here", "to", "claim", "your", "prize", "now"];
    for t in &tokens {
        assert!(known.contains(&t["token"].as_str().unwrap()) && t["weight"].is_number(), "{t}");
    }
    // With mean pooling, the rest of the logit difference comes with them: [CLS] and [SEP]'s shares and
    // the head's constant (tests/classify.rs checks that the parts add up).
    let line = serde_json::from_str::<Value>(&out).unwrap();
    assert!(line["special_tokens"].is_number() && line["bias_and_centring"].is_number(), "{out}");
    // A head made for another label set, or for another body, is refused in one line.
    let (trained, config) = TrainedHead::load(&head, tch::Device::Cpu).unwrap();
    for (name, changed, says) in [
        ("labels.safetensors", HeadConfig { labels: vec!["good".into(), "bad".into()], ..config.clone() }, "labels"),
        (
            "body.safetensors",
            HeadConfig { model: "bert-base-uncased".into(), ..config.clone() },
            "was trained on the body",
        ),
    ] {
        let forged = dir.join(name);
        trained.save(&forged, &changed).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_anatomy"))
            .args(["classify", "predict", forged.to_str().unwrap(), "hello"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(says) && err.trim().lines().count() == 1, "{err}");
    }
    // [CLS] pooling reads the same cached pass.
    let (code, out, _) = train(&dir, &["--limit", "200", "--max-len", "64", "--pooling", "cls"]);
    assert_eq!(code, Some(0));
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["features_cached"], true);
}

#[test]
fn bad_training_input_gets_one_line_and_exit_1() {
    let dir = TestDir::new("spam-bad");
    for (extra, says) in [
        (vec!["--max-len", "1"], "between 2 and 512"),
        (vec!["--max-len", "600"], "between 2 and 512"),
        (vec!["--batch", "0"], "--batch must be at least 1"),
        (vec!["--fine-tune", "--top-layers", "7"], "--top-layers must lie between 1 and 6"),
        (vec![], "run `make setup`"),
    ] {
        let (code, _, err) = train(&dir, &extra);
        assert_eq!(code, Some(1), "{extra:?}: {err}");
        assert!(err.contains(says) && err.trim().lines().count() == 1, "{extra:?}: {err}");
    }
}

/// A short fine-tuning run of the top layer only (2 steps of 16 messages, 32 tokens): the whole model is
/// written with `--out`, the embeddings and the five lower layers exactly as MiniLM's, the top layer
/// changed; `eval` and `predict` read it back, and the validation set was measured after each step.
#[test]
fn a_fine_tuned_model_is_saved_and_read_back_with_only_its_top_layer_changed() {
    let dir = TestDir::new("spam-fine-tune");
    std::fs::copy(data_dir().join("raw.jsonl"), dir.join("raw.jsonl")).expect("make setup fetches the corpus");
    let out = dir.join("tuned.safetensors");
    let args =
        ["--fine-tune", "--limit", "32", "--batch", "16", "--steps", "2", "--eval-every", "1", "--top-layers", "1"];
    let (code, stdout, err) = train(&dir, &[&args[..], &["--max-len", "32", "--out", out.to_str().unwrap()]].concat());
    assert_eq!(code, Some(0), "{err}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let steps: Vec<u64> =
        report["evaluations"].as_array().unwrap().iter().map(|e| e["step"].as_u64().unwrap()).collect();
    assert_eq!(steps, [1, 2], "measured after every step");
    let tuned: std::collections::HashMap<String, tch::Tensor> =
        tch::Tensor::read_safetensors(&out).unwrap().into_iter().collect();
    let original: std::collections::HashMap<String, tch::Tensor> = tch::Tensor::read_safetensors(
        transformer_anatomy::model_dir::resolve_model_dir(None).unwrap().join("model.safetensors"),
    )
    .unwrap()
    .into_iter()
    .collect();
    let same = |name: &str| tuned[name].equal(&original[name]);
    assert!(same("embeddings.word_embeddings.weight") && same("encoder.layer.4.output.dense.weight"));
    assert!(!same("encoder.layer.5.output.dense.weight"), "the top layer learned");
    assert_eq!(tuned["classifier.weight"].size(), [2, 384]);
    let o = Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["classify", "eval", out.to_str().unwrap(), "--json", "--dir", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let eval: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(eval["regime"], "fine-tune");
    let confusion = eval["test"]["confusion"].as_array().unwrap();
    let total: u64 = confusion.iter().flat_map(|r| r.as_array().unwrap()).map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(total, 592, "eval reads the whole test part");
    let o = Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["classify", "predict", out.to_str().unwrap(), "--json", "Re: patch for the build"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(answer["probability"].as_f64().unwrap() >= 0.5 && answer["tokens"].is_array(), "{answer}");
}
