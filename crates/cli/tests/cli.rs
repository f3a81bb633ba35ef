//! The `anatomy` command as a user runs it: output, JSON, and one-line errors for bad input.
use std::process::{Command, Output};

#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;
use test_dir::TestDir;

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
        "step 1  decoder input [<s>] → 3",
        "output 3 1 4 1 5 9 2 6 5 3 (right)",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in the tour:\n{out}");
    }
    for step in 1..=16 {
        assert!(out.contains(&format!("── {step} ")), "step {step} missing:\n{out}");
    }
    // Where the random weights start, the tour says so, and where the pretrained model comes instead.
    let step3 = &out[out.find("── 3 ").unwrap()..out.find("── 4 ").unwrap()];
    let note = "note   steps 3 to 15 run on random weights (seed 42) of bert-base-uncased's sizes";
    assert!(step3.contains(note) && step3.contains("all-MiniLM-L6-v2"), "no note at step 3:\n{step3}");
    // Its waits show progress, as plain lines where stderr is no terminal: the encoder's weights, the training.
    let err = stderr(&o);
    for said in ["drawing random weights for the embeddings and 12 layers", "training 50/200 steps  loss"] {
        assert!(err.contains(said), "missing {said:?} on stderr:\n{err}");
    }
    assert!(!out.contains("drawing") && !out.contains("training 50/200"), "progress stays off stdout:\n{out}");
    // The same seed prints the same values.
    assert_eq!(stdout(&anatomy(&["tour", "--device", "cpu"])), out);
}

/// The tour walks the text it is given, not its default: it ends well, step 1 shows that text's ids and
/// tokens (the ids `tokenize --json` gives for it), not the default's, and the steps that depend on the
/// text's length show its five positions, through to the last step.
#[test]
fn the_tour_takes_another_text() {
    let o = anatomy(&["tour", "fruit flies like a banana"]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "the tour failed ({}):\n{err}\nstdout:\n{out}", o.status);
    assert!(!err.contains("panicked"), "stderr:\n{err}");
    // Step 1, from its heading to step 2's: that text's ids and tokens, as the tour prints them.
    let step1 = match (out.find("── 1 tokenize"), out.find("── 2 ")) {
        (Some(start), Some(end)) if start < end => &out[start..end],
        _ => panic!("no step 1 in the tour:\n{out}"),
    };
    let tokenized = concat!(
        "   op     tokenizer(text, add_special_tokens=False)\n",
        "   shape  [1, 5]\n",
        "   ids    [5909, 10029, 2066, 1037, 15212]\n",
        "   tokens [\"fruit\", \"flies\", \"like\", \"a\", \"banana\"]\n",
    );
    assert!(step1.contains(tokenized), "step 1 is not that text's:\n{step1}");
    assert!(!out.contains("[2051, 10029, 2066, 2019, 8612]"), "the default text's ids in the tour:\n{out}");
    for expected in [
        "   shape  [1, 5, 768]",
        "   shape  [1, 5, 5]",
        "   op     tril(ones(5, 5))",
        "keys and values from the 5 encoder positions",
        "── 16 ",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in the tour:\n{out}");
    }
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
    // A folder of one's own: `make setup` fills another, so the fix named is the option, not the set-up.
    let o = anatomy(&["tokenize", "--model", "/nonexistent/model", "hi"]);
    assert_clean_error(&o, "pass --model a folder that holds the model");
    assert!(!stderr(&o).contains("run `make setup`"), "{}", stderr(&o));
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
        [
            "mha_per_head",
            "mha_fused",
            "mha_libtorch_sdpa",
            "encoder_bert_base_book",
            "encoder_bert_base_bert",
            "train_step_copy_d64",
            "decode_cached_d64",
            "decode_recompute_d64"
        ]
    );
    assert!(v["results"].as_array().unwrap().iter().all(|r| r["median_s"].as_f64().unwrap() > 0.0));
}

/// `anatomy train` then `anatomy translate`, as a learner runs them: a small copy model, its JSON
/// report, the checkpoint, greedy and beam decoding with and without the cache, and the attention picture.
#[test]
fn train_then_translate() {
    let dir = TestDir::new("cli-translate");
    let model = dir.join("copy.safetensors");
    let o = anatomy(&[
        "train",
        "--task",
        "copy",
        "--d-model",
        "32",
        "--layers",
        "1",
        "--steps",
        "200",
        "--warmup",
        "80",
        "-o",
        model.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["task"], "copy");
    assert_eq!(v["steps"].as_array().unwrap().len(), 200);
    assert_eq!(v["steps"][0]["step"], 1);
    assert!(v["steps"][0]["loss"].as_f64().unwrap() > v["steps"][199]["loss"].as_f64().unwrap());
    assert!(v["seconds"].as_f64().unwrap() > 0.0 && v["tokens_per_s"].as_f64().unwrap() > 0.0);
    assert!(v["eval"]["exact_match"].as_f64().unwrap() >= 0.95, "{}", v["eval"]);
    assert!(v["eval"]["token_accuracy"].as_f64().unwrap() >= 0.98 && v["eval"]["loss"].as_f64().unwrap() > 0.0);

    let picture = dir.join("alignment.html");
    let path = model.to_str().unwrap();
    for extra in [&[][..], &["--beam", "3"], &["--no-cache"], &["--beam", "3", "--no-cache"]] {
        let mut args = vec!["translate", "--checkpoint", path, "--json", "--attention", picture.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.push("3 1 4 1 5 9 2 6 5 3");
        let o = anatomy(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["input"], "3 1 4 1 5 9 2 6 5 3");
        assert_eq!(v["output"], "3 1 4 1 5 9 2 6 5 3", "{extra:?}");
        assert_eq!(v["tokens"].as_array().unwrap().len(), 10);
        assert!(v["log_prob"].as_f64().unwrap() < 0.0);
        let beams = v["beams"].as_array().unwrap();
        assert!(beams.len() >= if extra.contains(&"3") { 3 } else { 1 });
        let html = std::fs::read_to_string(&picture).unwrap();
        assert!(html.contains("<svg") && html.contains("Encoder-decoder attention"));
    }
    // Plain output: the translation on the first line, then its tokens and log-probability.
    let o = anatomy(&["translate", "--checkpoint", path, "2718281828"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("2 7 1 8 2 8 1 8 2 8\ntokens [\"2\", \"7\""), "{}", stdout(&o));
}

#[test]
fn bad_training_and_translation_input_is_a_one_line_error() {
    assert_clean_error(&anatomy(&["train", "--task", "translate"]), "possible values: copy, reverse, dates");
    assert_clean_error(&anatomy(&["train", "--task", "copy", "--steps", "0"]), "--steps must be at least 1");
    assert_clean_error(&anatomy(&["train", "--task", "copy", "--d-model", "30", "--heads", "4"]), "not divisible");
    assert_clean_error(&anatomy(&["train", "--task", "copy", "--warmup", "0"]), "--warmup");
    assert_clean_error(&anatomy(&["train", "--task", "copy", "--seeds", "5-1"]), "runs backwards");
    assert_clean_error(&anatomy(&["train", "--task", "copy", "--seeds", "1-3", "--seed", "2"]), "cannot be used with");
    assert_clean_error(&anatomy(&["train", "--task", "copy", "--label-smoothing", "1.5"]), "--label-smoothing");
    let dir = TestDir::new("cli-bad-input");
    let nowhere = dir.join("no-such-folder/model.safetensors");
    assert_clean_error(
        &anatomy(&["train", "--task", "copy", "--steps", "2", "-o", nowhere.to_str().unwrap()]),
        "does not exist",
    );
    assert!(!nowhere.exists() && !nowhere.parent().unwrap().exists());
    assert_clean_error(
        &anatomy(&["translate", "--checkpoint", "/nonexistent/model.safetensors", "1 2"]),
        "anatomy train",
    );

    let model = dir.join("tiny.safetensors");
    let o = anatomy(&[
        "train",
        "--task",
        "dates",
        "--steps",
        "2",
        "--d-model",
        "16",
        "-o",
        model.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!dir.join("tiny.safetensors.partial").exists(), "no partial file is left behind");
    let path = model.to_str().unwrap();
    assert_clean_error(
        &anatomy(&["translate", "--checkpoint", path, "the first of smarch 2026"]),
        "\"smarch\" is not in the dates task's vocabulary",
    );
    assert_clean_error(&anatomy(&["translate", "--checkpoint", path, "--beam", "0", "1 may 2000"]), "beam width");
    let truncated = dir.join("truncated.safetensors");
    let bytes = std::fs::read(&model).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 100]).unwrap();
    assert_clean_error(
        &anatomy(&["translate", "--checkpoint", truncated.to_str().unwrap(), "1 may 2000"]),
        "truncated",
    );
}

#[test]
fn the_device_is_resolved_only_by_commands_that_run_a_model() {
    // `--device` is a global option; commands that never touch a tensor must not fail over it.
    for args in [&["--device", "cuda", "exercises", "list"][..], &["--device", "cuda", "tokenize", "time flies"]] {
        let o = anatomy(args);
        assert!(o.status.success(), "{args:?} failed: {}", stderr(&o));
    }
    if !tch::Cuda::is_available() {
        // A command that runs a model still refuses a device the machine does not have, in one line.
        assert_clean_error(&anatomy(&["--device", "cuda", "encode", "time flies"]), "no CUDA device");
    }
}

#[test]
fn gpt_trains_on_a_text_writes_a_checkpoint_and_samples_the_same_text_with_and_without_the_cache() {
    let dir = TestDir::new("cli-gpt");
    let text = dir.join("text.txt");
    std::fs::write(&text, "the whale is white and the sea is wide. ".repeat(40)).unwrap();
    let model = dir.join("gpt.safetensors");
    let (text_arg, model_arg) = (text.to_str().unwrap(), model.to_str().unwrap());
    let sizes =
        ["--layers", "1", "--heads", "2", "--d-model", "16", "--context", "16", "--batch", "4", "--warmup", "2"];
    let trained = anatomy(
        &[&["gpt", "train", "--text", text_arg, "--steps", "5", "--json", "-o", model_arg][..], &sizes].concat(),
    );
    assert!(trained.status.success(), "{}", stderr(&trained));
    let report: serde_json::Value = serde_json::from_str(&stdout(&trained)).unwrap();
    assert_eq!(report["steps"].as_array().unwrap().len(), 5);
    let val = report["eval"]["val_loss"].as_f64().unwrap();
    assert!(val > 0.0 && val < 4.0, "held-out loss {val}");
    let sample = |extra: &[&str]| {
        let o =
            anatomy(&[&["gpt", "sample", "--checkpoint", model_arg, "--prompt", "the ", "--json"][..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()
    };
    let (cached, recomputed) = (sample(&[]), sample(&["--no-cache"]));
    assert_eq!(cached["text"], recomputed["text"]);
    assert_eq!(cached["text"].as_str().unwrap().chars().count(), 256);
    assert_clean_error(
        &anatomy(&["gpt", "sample", "--checkpoint", model_arg, "--prompt", "Z"]),
        "'Z' is not in the model's vocabulary",
    );
    assert_clean_error(
        &anatomy(&[&["gpt", "train", "--text", text_arg, "--heads", "3"][..], &sizes[4..]].concat()),
        "must divide --d-model",
    );
    assert_clean_error(
        &anatomy(&["gpt", "train", "--text", dir.join("missing.txt").to_str().unwrap()]),
        "cannot read the text",
    );
}

/// A short sweep over three seeds: one run per seed, and the spread is theirs (mean, lowest and highest
/// with the seeds that gave them).
#[test]
fn train_over_seeds_gives_each_run_and_their_spread() {
    let o = anatomy(&["train", "--task", "copy", "--seeds", "1-3", "--steps", "20", "--d-model", "16", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let sweep: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let runs: Vec<(u64, f64)> = sweep["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["seed"].as_u64().unwrap(), r["exact_match"].as_f64().unwrap()))
        .collect();
    assert_eq!(runs.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2, 3]);
    let spread = &sweep["exact_match"];
    let mean = runs.iter().map(|r| r.1).sum::<f64>() / 3.0;
    assert!((spread["mean"].as_f64().unwrap() - mean).abs() < 1e-12, "{spread}");
    let lowest = runs.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    let highest = runs.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    assert_eq!((spread["min"].as_f64().unwrap(), spread["min_seed"].as_u64().unwrap()), (lowest.1, lowest.0));
    assert_eq!((spread["max"].as_f64().unwrap(), spread["max_seed"].as_u64().unwrap()), (highest.1, highest.0));
    assert_eq!(sweep["task"], "copy");
    // Three different seeds train three different models: the runs' losses are not all equal.
    let losses: Vec<f64> = sweep["runs"].as_array().unwrap().iter().map(|r| r["loss"].as_f64().unwrap()).collect();
    assert!(losses[0] != losses[1] || losses[1] != losses[2], "{losses:?}");
}

/// A reader that goes away (`anatomy tour | head -2`, `anatomy doctor | grep -q CUDA`) ends the command
/// quietly with exit code 0, as command-line tools end, whether the command prints line by line or writes
/// through a writer it was given; any other failure to write is one line and exit code 1. The pipe's
/// reading end is closed before the command starts, so that its very first write fails (a reader closed
/// later could find everything already written into the pipe's buffer).
#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    for args in [&["doctor"][..], &["tour"], &["exercises", "list"], &["tokenize", "time flies"], &["--help"]] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = Command::new(env!("CARGO_BIN_EXE_anatomy"))
            .args(args)
            .arg("--device")
            .arg("cpu")
            .stdout(writer)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?} said something on a closed pipe");
    }
    let full = std::fs::File::create("/dev/full").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_anatomy")).arg("doctor").stdout(full).output().unwrap();
    assert_clean_error(&o, "writing to standard output");
}

/// Without a GPU (every CI machine), `make test-gpu` and `anatomy check-gpu` fail at once, before any
/// download or build, with one line that says what they need. (On a machine with an NVIDIA GPU they run the
/// checks instead, minutes of work: this test then has nothing to show and says so.)
#[test]
fn the_gpu_check_fails_clearly_without_a_gpu() {
    let has_gpu = std::path::Path::new("/dev/nvidia0").exists() || tch::Cuda::is_available();
    if has_gpu {
        eprintln!("a GPU is here: `make test-gpu` is the check to run");
        return;
    }
    assert_clean_error(&anatomy(&["check-gpu"]), "no CUDA device");
    assert!(stdout(&anatomy(&["check-gpu"])).is_empty(), "nothing before the error");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let o = Command::new(root.join("scripts/test-gpu.sh")).env("PATH", "/usr/bin:/bin").output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no NVIDIA GPU here") && stderr(&o).trim_end().lines().count() == 1, "{}", stderr(&o));
    assert!(stdout(&o).is_empty(), "nothing set up or built: {}", stdout(&o));
}
