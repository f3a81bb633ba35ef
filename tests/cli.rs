//! The `anatomy` command as a user runs it: output, JSON, and one-line errors for bad input.
use std::process::{Command, Output};

fn anatomy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anatomy")).args(args).output().expect("the anatomy binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A failure is one line on stderr starting with "error:", a non-zero exit code, and no panic.
fn assert_clean_error(o: &Output, expected: &str) {
    let err = stderr(o);
    assert!(!o.status.success(), "expected a failure, got success; stdout: {}", stdout(o));
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert!(err.starts_with("error: ") && err.trim_end().lines().count() == 1, "not a one-line error: {err:?}");
    assert!(!err.contains("panicked") && !err.contains("libc10"), "a crash, not an error: {err}");
    assert!(err.contains(expected), "expected {expected:?} in: {err}");
}

#[test]
fn tokenize_json_gives_ids_type_ids_and_tokens() {
    let o = anatomy(&["tokenize", "--json", "time flies like an arrow"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["input_ids"], serde_json::json!([2051, 10029, 2066, 2019, 8612]));
    assert_eq!(v["token_type_ids"], serde_json::json!([0, 0, 0, 0, 0]));
    assert_eq!(v["tokens"], serde_json::json!(["time", "flies", "like", "an", "arrow"]));
}

#[test]
fn tokenize_a_pair_with_special_tokens() {
    let o =
        anatomy(&["tokenize", "--special-tokens", "--json", "time flies like an arrow", "fruit flies like a banana"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["input_ids"],
        serde_json::json!([101, 2051, 10029, 2066, 2019, 8612, 102, 5909, 10029, 2066, 1037, 15212, 102])
    );
    assert_eq!(v["token_type_ids"], serde_json::json!([0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]));
}

#[test]
fn the_tour_walks_every_step() {
    let o = anatomy(&["tour", "--device", "cpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for expected in [
        "[2051, 10029, 2066, 2019, 8612]",
        "shape  [1, 5, 768]",
        "shape  [1, 5, 5]",
        "shape  [1, 5, 64]",
        "shape  [1, 3]",
        "every weight above the diagonal is exactly 0",
        "weights [1, 12, 3, 5] (rectangular: target × source)",
        "step 1  decoder input [[CLS]] →",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in the tour:\n{out}");
    }
    for step in 1..=16 {
        assert!(out.contains(&format!("── {step} ")), "step {step} missing:\n{out}");
    }
    // The same seed prints the same values.
    assert_eq!(stdout(&anatomy(&["tour", "--device", "cpu"])), out);
}

#[test]
fn the_tour_takes_another_text() {
    let o = anatomy(&["tour", "fruit flies like a banana"]);
    assert!(stdout(&o).contains("[5909, 10029, 2066, 1037, 15212]"), "{}", stdout(&o));
}

#[test]
fn empty_text_is_a_one_line_error() {
    assert_clean_error(&anatomy(&["tokenize", ""]), "empty");
    assert_clean_error(&anatomy(&["tour", "  "]), "empty");
}

#[test]
fn text_longer_than_the_position_table_is_a_one_line_error() {
    let long = vec!["arrow"; 600].join(" ");
    assert_clean_error(&anatomy(&["tour", &long]), "position embeddings for only 512");
}

#[test]
fn a_missing_model_folder_is_a_one_line_error() {
    assert_clean_error(&anatomy(&["tokenize", "--model", "/nonexistent/model", "hi"]), "make setup");
    let o = Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["tokenize", "hi"])
        .env("ANATOMY_MODEL_DIR", "/nonexistent/from-env")
        .output()
        .unwrap();
    assert_clean_error(&o, "/nonexistent/from-env");
}

#[test]
fn doctor_reports_libtorch_and_the_model() {
    let o = anatomy(&["doctor"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("LibTorch        2.13.0"), "{out}");
    assert!(out.contains("hidden 384, 12 heads, 6 layers"), "{out}");
    let o = anatomy(&["doctor", "--model", "/nonexistent/model"]);
    assert!(stdout(&o).contains("problem"), "{}", stdout(&o));
    assert_clean_error(&o, "1 problem(s) found");
}

#[test]
fn bench_quick_prints_json_with_every_case() {
    let o = anatomy(&["bench", "--quick", "--json", "--repeats", "1", "--device", "cpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let names: Vec<&str> = v["results"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["mha_per_head", "mha_fused", "mha_libtorch_sdpa", "encoder_bert_base_book", "encoder_bert_base_bert"]
    );
    assert!(v["results"].as_array().unwrap().iter().all(|r| r["median_s"].as_f64().unwrap() > 0.0));
}
