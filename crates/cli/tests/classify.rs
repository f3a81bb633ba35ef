//! Chapter 12's data through the binary: `anatomy classify prepare` on the corpus `make setup` fetched —
//! the counts pinned, copies dropped before the split, the split seeded, stratified and disjoint.
#[path = "../../../tests/common/scratch.rs"]
mod scratch;

use std::collections::{BTreeMap, HashSet};
use std::process::Command;

use scratch::Scratch;
use serde_json::Value;
use transformer_anatomy::classify::data::{data_dir, read_examples, Part};

fn prepare(dir: &std::path::Path) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["classify", "prepare", "--json", "--dir", dir.to_str().unwrap()])
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn the_corpus_becomes_5916_examples_in_one_seeded_stratified_split() {
    let dir = Scratch::new("spam");
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
    let dir = Scratch::new("spam-missing");
    let (code, _, err) = prepare(&dir);
    assert_eq!(code, Some(1));
    assert!(err.contains("run `make setup`") && err.trim().lines().count() == 1, "{err}");
    assert!(!dir.join("examples.jsonl").exists());
}
