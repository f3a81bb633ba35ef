//! `anatomy bench --pytorch` against a stand-in for the PyTorch side: a shell script that speaks the
//! same protocol (one JSON request per line, one JSON reply per line) with fixed times, so the test knows
//! what the comparison must print without a 5 GB PyTorch install.
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output};

#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;
use test_dir::TestDir;

/// One bench at a time: a bench's times mean something only when nothing else runs. Plain `cargo test`
/// runs this file's tests side by side, and a second bench on the 2 cores turned our cache's win (1.4–1.5×
/// alone) into a loss (0.36–0.77× in two runs of three), failing the first test below.
static ONE_BENCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_BENCH.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A peer that answers every decoding job with `pairs` (cached, recomputing) pairs of 1,000 s and
/// 4,000 s (far slower than any run of ours, so that the ratio's direction shows), and every other case
/// with 2 ms. It is run as `PEER scripts/bench_pytorch.py --serve` and ignores both.
fn peer(dir: &TestDir, pairs: usize) -> PathBuf {
    let (cached, recomputed) = (vec!["1000.0"; pairs].join(", "), vec!["4000.0"; pairs].join(", "));
    let script = format!(
        "#!/bin/sh\nwhile read -r line; do\n  case \"$line\" in\n    \
         *'\"pairs\"'*) echo '{{\"cached_s\": [{cached}], \"recompute_s\": [{recomputed}]}}' ;;\n    \
         *) echo '{{\"median_s\": 0.002}}' ;;\n  esac\ndone\n"
    );
    let path = dir.join("peer.sh");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn bench(peer: &PathBuf, json: bool) -> Output {
    let mut args = vec!["bench", "--quick", "--only", "decode", "--repeats", "3", "--rounds", "2", "--device", "cpu"];
    args.extend(json.then_some("--json"));
    Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(args)
        .arg("--pytorch")
        .arg(peer)
        .output()
        .expect("the anatomy binary runs")
}

/// Tests whose verdict rests on a time measured here: `make test` runs them after everything else, with
/// nothing beside them (`-- whole_machine::`), since its other lane (notebooks, a browser) turned our
/// cache's 1.4x win into 0.08x once. A plain `cargo test` runs them with the rest.
mod whole_machine {
    use super::*;

    #[test]
    fn decoding_is_compared_with_pytorchs_round_by_round_and_its_cache_ratio_is_reported() {
        decoding_is_compared_with_pytorchs_round_by_round();
    }
}

fn decoding_is_compared_with_pytorchs_round_by_round() {
    let _alone = alone();
    let dir = TestDir::new("bench-peer");
    let o = bench(&peer(&dir, 3), true);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let results = v["results"].as_array().unwrap();
    let names: Vec<&str> = results.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["decode_cached_d64", "decode_recompute_d64"]);
    for (row, theirs) in results.iter().zip([1000.0, 4000.0]) {
        // Each side's median over its 2 rounds × 3 pairs; the ratio is ours over theirs (a median of the
        // rounds' ratios), so a peer a thousand times slower gives a ratio far below 1.
        assert_eq!(row["pytorch_median_s"].as_f64(), Some(theirs), "{row}");
        let (ours, ratio) = (row["median_s"].as_f64().unwrap(), row["ratio"].as_f64().unwrap());
        assert!(ours > 0.0 && ours < 10.0, "{row}");
        assert!(ratio > 0.0 && ratio < 0.01, "ours / PyTorch's: {row}");
    }
    let cache = &v["cache_ratios"][0];
    assert_eq!(cache["name"], "decode_d64");
    assert_eq!(cache["pairs"], 6);
    assert_eq!(cache["pytorch_ratio"].as_f64(), Some(4000.0 / 1000.0), "{cache}");
    assert!(cache["ratio"].as_f64().unwrap() > 1.0, "our own cache must still win: {cache}");

    let o = bench(&peer(&dir, 3), false);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(table.contains("decoding 8 tokens, d64: the key/value cache is "), "{table}");
    assert!(table.contains("(median of 6 pairs; PyTorch's 4.00×)"), "{table}");
}

#[test]
fn a_peer_that_sends_too_few_pairs_is_a_one_line_error() {
    let _alone = alone();
    let dir = TestDir::new("bench-short-peer");
    let o = bench(&peer(&dir, 2), true);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: ") && err.trim_end().lines().count() == 1, "{err:?}");
    assert!(err.contains("the PyTorch side sent no 3 pairs of times for decode_d64"), "{err}");
    assert!(o.stdout.is_empty(), "nothing half-written: {}", String::from_utf8_lossy(&o.stdout));
}
