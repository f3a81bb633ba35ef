//! Real weights: the MiniLM checkpoint read into the chapter's modules must compute what Hugging Face
//! `transformers` computes. The reference numbers come from scripts/hf_reference.py (run by hand; see
//! its header) and live in tests/data/minilm_reference.json.
mod common;

use std::sync::OnceLock;

use rstest::rstest;
use serde_json::Value;
use tch::{Device, Kind, Tensor};
use transformer_anatomy::inspect::values;
use transformer_anatomy::model_dir::resolve_model_dir;
use transformer_anatomy::{mean_pooled_embedding, AttentionKind, BertConfig, BertModel, EncoderOptions, Pass};

fn reference() -> &'static Value {
    static REFERENCE: OnceLock<Value> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/minilm_reference.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    })
}

fn model(kind: AttentionKind) -> BertModel {
    BertModel::from_pretrained(resolve_model_dir(None).unwrap(), kind, Device::Cpu).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

fn assert_all_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    let worst = got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
    assert!(worst <= tol, "{what}: differs from Hugging Face by {worst:e} (> {tol:e})");
}

#[test]
fn the_checkpoint_loads_with_nothing_missing() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let m = model(AttentionKind::Fused);
    assert!(m.load_report.missing.is_empty());
    assert_eq!(m.load_report.unexpected, Vec::<String>::new(), "every tensor in the file has a place");
    assert_eq!((m.config.hidden_size, m.config.num_hidden_layers, m.config.num_attention_heads), (384, 6, 12));
}

#[rstest]
fn hidden_states_and_attention_match_hugging_face(
    #[values(0, 1, 2, 3)] case: usize,
    #[values(AttentionKind::Fused, AttentionKind::PerHead)] kind: AttentionKind,
) {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let m = model(kind);
    let tokenizer = common::tokenizer();
    let r = &reference()["cases"][case];
    let texts: Vec<&str> = r["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    let (encoding, out) = m.encode_text(&tokenizer, texts[0], texts.get(1).copied()).unwrap();
    let want_ids: Vec<i64> = r["input_ids"].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect();
    assert_eq!(encoding.input_ids, want_ids, "our tokenizer and Hugging Face's agree on the ids");
    let want_types: Vec<i64> = r["token_type_ids"].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect();
    assert_eq!(encoding.token_type_ids, want_types);

    let hidden = out.last_hidden_state.get(0); // [seq, 384]
    for (t, row) in r["last_hidden_state_first_dims"].as_array().unwrap().iter().enumerate() {
        let want = floats(row);
        assert_all_close(
            &format!("token {t}, first dims"),
            &values(&hidden.get(t as i64).narrow(0, 0, want.len() as i64)),
            &want,
            1e-4,
        );
    }
    assert_all_close(
        "per-token sums",
        &values(&hidden.sum_dim_intlist(-1, false, Kind::Double)),
        &floats(&r["last_hidden_state_sums"]),
        1e-3,
    );
    assert_all_close(
        "per-token norms",
        &values(&hidden.norm_scalaropt_dim(2, [-1], false)),
        &floats(&r["last_hidden_state_norms"]),
        1e-4,
    );

    for a in r["attentions"].as_array().unwrap() {
        let (layer, head) = (a["layer"].as_i64().unwrap(), a["head"].as_i64().unwrap());
        let ours = out.attentions[layer as usize].get(0).get(head);
        let want: Vec<f64> = a["weights"].as_array().unwrap().iter().flat_map(floats).collect();
        assert_all_close(&format!("attention layer {layer} head {head}"), &values(&ours), &want, 1e-4);
    }

    let embedding = mean_pooled_embedding(&out.last_hidden_state, None).get(0);
    let want = floats(&r["sentence_embedding_first_dims"]);
    assert_all_close("sentence embedding", &values(&embedding.narrow(0, 0, want.len() as i64)), &want, 1e-4);
}

#[test]
fn per_head_and_fused_layouts_give_the_same_hidden_states() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let tokenizer = common::tokenizer();
    let (fused, per_head) = (model(AttentionKind::Fused), model(AttentionKind::PerHead));
    let (_, a) = fused.encode_text(&tokenizer, "time flies like an arrow", Some("fruit flies like a banana")).unwrap();
    let (_, b) =
        per_head.encode_text(&tokenizer, "time flies like an arrow", Some("fruit flies like a banana")).unwrap();
    common::assert_close(&a.last_hidden_state, &b.last_hidden_state, 1e-5);
    for (x, y) in a.attentions.iter().zip(&b.attentions) {
        common::assert_close(x, y, 1e-5);
    }
}

#[test]
fn sentence_similarities_match_and_rank_sensibly() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let m = model(AttentionKind::Fused);
    let tokenizer = common::tokenizer();
    let cases = reference()["cases"].as_array().unwrap();
    let embeddings: Vec<Tensor> = cases
        .iter()
        .map(|c| {
            let texts: Vec<&str> = c["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
            let (_, out) = m.encode_text(&tokenizer, texts[0], texts.get(1).copied()).unwrap();
            mean_pooled_embedding(&out.last_hidden_state, None)
        })
        .collect();
    let stacked = Tensor::cat(&embeddings, 0); // [4, 384], unit rows
    let similarities = stacked.matmul(&stacked.tr());
    let want: Vec<f64> = reference()["sentence_similarities"].as_array().unwrap().iter().flat_map(floats).collect();
    assert_all_close("cosine similarities", &values(&similarities), &want, 1e-4);
    // "time flies like an arrow" is closer to the pair that contains it than to the sentence about foxes.
    assert!(similarities.double_value(&[0, 1]) > similarities.double_value(&[0, 2]));
}

#[test]
fn the_attention_weights_are_kept_only_when_the_pass_asks_for_them() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
                                          // They are [batch, 12, seq, seq] per layer: an embedding of a long text must not pay for them.
    let m = model(AttentionKind::Fused);
    let ids = common::tokenizer().encode("time flies like an arrow", true).unwrap().ids_tensor(Device::Cpu);
    let plain = m.forward(&ids, None, None, false).unwrap();
    let shown = m.forward(&ids, None, None, Pass::WEIGHTS).unwrap();
    assert!(plain.attentions.is_empty(), "{} weight tensors kept without being asked", plain.attentions.len());
    assert_eq!(shown.attentions.len(), 6);
    assert_eq!(shown.attentions[0].size(), [1, 12, 7, 7]);
    // Without the weights, evaluation runs libtorch's fused attention kernel instead of the chapter's
    // steps (section 3): the same numbers up to float rounding.
    common::assert_close(&plain.last_hidden_state, &shown.last_hidden_state, 1e-5);
}

#[test]
fn a_padded_batch_gives_the_same_vectors_as_single_sentences() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let m = model(AttentionKind::Fused);
    let tokenizer = common::tokenizer();
    let short = tokenizer.encode("time flies like an arrow", true).unwrap();
    let long = tokenizer.encode("The quick brown fox jumps over the lazy dog.", true).unwrap();
    let n = long.len();
    let mut padded = short.input_ids.clone();
    padded.resize(n, 0);
    let ids = Tensor::from_slice(&[padded, long.input_ids.clone()].concat()).view([2, n as i64]);
    let mask = ids.ne(0).to_kind(Kind::Int64);
    let batch = m.forward(&ids, None, Some(&mask), false).unwrap();
    let alone = m.forward(&short.ids_tensor(Device::Cpu), None, None, false).unwrap();
    common::assert_close(
        &batch.last_hidden_state.get(0).narrow(0, 0, short.len() as i64),
        &alone.last_hidden_state.get(0),
        1e-4,
    );
    common::assert_close(
        &mean_pooled_embedding(&batch.last_hidden_state, Some(&mask)).get(0),
        &mean_pooled_embedding(&alone.last_hidden_state, None).get(0),
        1e-4,
    );
}

// --- robustness ---

fn scratch_folder(name: &str) -> common::TestDir {
    let dir = common::TestDir::new(name);
    let model_dir = resolve_model_dir(None).unwrap();
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(model_dir.join(f), dir.join(f)).unwrap();
    }
    dir
}

fn load_error(dir: &std::path::Path) -> String {
    format!("{:#}", BertModel::from_pretrained(dir, AttentionKind::Fused, Device::Cpu).unwrap_err())
}

#[test]
fn a_truncated_weights_file_is_a_clear_error() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let dir = scratch_folder("truncated");
    let bytes = std::fs::read(resolve_model_dir(None).unwrap().join("model.safetensors")).unwrap();
    std::fs::write(dir.join("model.safetensors"), &bytes[..bytes.len() / 3]).unwrap();
    let err = load_error(&dir);
    assert!(err.contains("truncated or corrupt"), "{err}");
    std::fs::write(dir.join("model.safetensors"), b"not a safetensors file at all").unwrap();
    assert!(load_error(&dir).contains("truncated or corrupt"));
    std::fs::remove_file(dir.join("model.safetensors")).unwrap();
    assert!(load_error(&dir).contains("no weights at"));
}

#[test]
fn a_config_that_disagrees_with_the_weights_names_the_tensor() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let dir = scratch_folder("wrong-config");
    std::os::unix::fs::symlink(
        resolve_model_dir(None).unwrap().join("model.safetensors"),
        dir.join("model.safetensors"),
    )
    .ok();
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    config["hidden_size"] = 768.into();
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let err = load_error(&dir);
    assert!(err.contains("embeddings.LayerNorm.bias") && err.contains("[384]") && err.contains("[768]"), "{err}");
}

#[test]
fn a_vocabulary_of_the_wrong_size_is_refused() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let m = model(AttentionKind::Fused);
    let small = BertConfig { vocab_size: 1000, ..m.config.clone() };
    let err =
        transformer_anatomy::pretrained::check_tokenizer_fits(&common::tokenizer(), &small).unwrap_err().to_string();
    assert!(err.contains("30522 tokens") && err.contains("1000 rows"), "{err}");
}

#[test]
fn a_pair_longer_than_512_tokens_is_a_clear_error() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let m = model(AttentionKind::Fused);
    let long = vec!["arrow"; 300].join(" ");
    let err = format!("{:#}", m.encode_text(&common::tokenizer(), &long, Some(&long)).unwrap_err());
    assert!(err.contains("603 tokens") && err.contains("only 512"), "{err}");
}

/// Writes a tiny BERT's parameters as a checkpoint in the older layout of `bert-base-uncased`'s own
/// file (a `bert.` prefix, LayerNorm `gamma`/`beta`, a `position_ids` buffer, a pretraining head the
/// model has no place for), then loads it.
#[test]
fn bert_prefix_gamma_beta_and_extra_tensors_are_handled() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let dir = common::TestDir::new("old-layout");
    let original = BertModel::from_config_and_weights(
        &config,
        &write_tiny_checkpoint(&config, &dir, |_| true),
        AttentionKind::Fused,
        Device::Cpu,
    )
    .unwrap();
    assert_eq!(original.load_report.unexpected, ["cls.predictions.bias"]);
    // Both layouts read the same file, and compute the same thing.
    let per_head = BertModel::from_config_and_weights(
        &config,
        &dir.join("model.safetensors"),
        AttentionKind::PerHead,
        Device::Cpu,
    )
    .unwrap();
    let ids = Tensor::from_slice(&[1i64, 5, 9, 2]).view([1, 4]);
    let (a, b) =
        (original.forward(&ids, None, None, false).unwrap(), per_head.forward(&ids, None, None, false).unwrap());
    common::assert_close(&a.last_hidden_state, &b.last_hidden_state, 1e-5);

    // A file without one of the model's tensors is refused, naming it.
    let path = write_tiny_checkpoint(&config, &dir, |name| !name.contains("layer.1.output.dense.weight"));
    let err = format!(
        "{:#}",
        BertModel::from_config_and_weights(&config, &path, AttentionKind::Fused, Device::Cpu).unwrap_err()
    );
    assert!(err.contains("encoder.layer.1.output.dense.weight"), "{err}");
}

fn write_tiny_checkpoint(
    config: &BertConfig,
    dir: &std::path::Path,
    keep: impl Fn(&str) -> bool,
) -> std::path::PathBuf {
    let vs = tch::nn::VarStore::new(Device::Cpu);
    let config = &BertConfig { options: EncoderOptions::bert(), ..config.clone() }; // a checkpoint's layout
    transformer_anatomy::TransformerEncoder::new(vs.root(), config).unwrap();
    tch::nn::linear(vs.root() / "pooler" / "dense", config.hidden_size, config.hidden_size, Default::default());
    let mut named: Vec<(String, Tensor)> = vs
        .variables()
        .into_iter()
        .filter(|(n, _)| keep(n))
        .map(|(n, t)| {
            (
                format!(
                    "bert.{}",
                    n.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
                ),
                t,
            )
        })
        .collect();
    named.push((
        "bert.embeddings.position_ids".into(),
        Tensor::arange(config.max_position_embeddings, (Kind::Int64, Device::Cpu)).unsqueeze(0),
    ));
    named.push(("cls.predictions.bias".into(), Tensor::zeros([config.vocab_size], (Kind::Float, Device::Cpu))));
    let path = dir.join("model.safetensors");
    Tensor::write_safetensors(&named, &path).unwrap();
    path
}
