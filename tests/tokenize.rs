//! Chapter section 1: tokenizing, the configuration and the token embedding.
mod common;

use rstest::rstest;
use tch::nn::{self, Module};
use tch::Device;
use transformer_anatomy::inspect::shape;
use transformer_anatomy::{model_dir::resolve_model_dir, token_embedding, Activation, BertConfig, EncoderOptions};

const TEXT: &str = "time flies like an arrow";

#[test]
fn the_chapters_sentence_gives_the_chapters_ids() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let encoding = common::tokenizer().encode(TEXT, false).unwrap();
    assert_eq!(encoding.input_ids, [2051, 10029, 2066, 2019, 8612]);
    assert_eq!(encoding.tokens, ["time", "flies", "like", "an", "arrow"]);
    assert_eq!(encoding.token_type_ids, [0; 5]);
    assert_eq!(encoding.ids_tensor(Device::Cpu).size(), [1, 5]);
}

#[test]
fn a_pair_with_special_tokens_gets_cls_sep_and_type_ids() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let encoding = common::tokenizer().encode_pair(TEXT, "fruit flies like a banana", true).unwrap();
    assert_eq!(encoding.input_ids, [101, 2051, 10029, 2066, 2019, 8612, 102, 5909, 10029, 2066, 1037, 15212, 102]);
    assert_eq!(encoding.token_type_ids, [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
    assert_eq!(encoding.tokens.first().map(String::as_str), Some("[CLS]"));
    assert_eq!(encoding.tokens.last().map(String::as_str), Some("[SEP]"));
}

#[rstest]
#[case(101, "[CLS]")]
#[case(102, "[SEP]")]
#[case(2051, "time")]
#[case(8612, "arrow")]
fn ids_map_back_to_tokens(#[case] id: i64, #[case] token: &str) {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let tokenizer = common::tokenizer();
    assert_eq!(tokenizer.id_to_token(id).as_deref(), Some(token));
    assert_eq!(tokenizer.token_to_id(token), Some(id));
}

#[rstest]
#[case(-1)]
#[case(30522)]
#[case(i64::MAX)]
fn ids_outside_the_vocabulary_have_no_token(#[case] id: i64) {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    assert_eq!(common::tokenizer().id_to_token(id), None);
}

#[test]
fn words_are_split_into_word_pieces_and_unknown_characters_become_unk() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let encoding = common::tokenizer().encode("tokenizing ☃", false).unwrap();
    assert_eq!(encoding.tokens, ["token", "##izing", "[UNK]"]);
    assert_eq!(encoding.input_ids, [19204, 6026, 100]);
}

#[test]
fn long_texts_are_neither_truncated_nor_padded() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
                                          // The model's tokenizer.json asks for truncation and padding to 128; both are switched off.
    let text = vec!["arrow"; 300].join(" ");
    assert_eq!(common::tokenizer().encode(&text, false).unwrap().len(), 300);
    assert_eq!(common::tokenizer().encode("arrow", false).unwrap().len(), 1);
}

#[rstest]
#[case("")]
#[case("   ")]
#[case("\n\t")]
fn empty_text_is_an_error(#[case] text: &str) {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let err = common::tokenizer().encode(text, false).unwrap_err().to_string();
    assert!(err.contains("empty"), "unexpected error: {err}");
    assert!(common::tokenizer().encode_pair(TEXT, text, true).is_err());
}

#[test]
fn a_missing_tokenizer_is_a_clear_error() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let dir = common::TestDir::new("no-tokenizer");
    let err = transformer_anatomy::Tokenizer::from_model_dir(&dir).err().unwrap().to_string();
    assert!(err.contains("make setup"), "unexpected error: {err}");
}

#[test]
fn bert_base_uncased_preset_has_the_published_sizes() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let c = BertConfig::bert_base_uncased(EncoderOptions::book());
    assert_eq!(
        (
            c.vocab_size,
            c.hidden_size,
            c.num_attention_heads,
            c.num_hidden_layers,
            c.intermediate_size,
            c.max_position_embeddings
        ),
        (30522, 768, 12, 12, 3072, 512)
    );
    assert_eq!((c.hidden_dropout_prob, c.attention_probs_dropout_prob, c.layer_norm_eps), (0.1, 0.1, 1e-12));
    assert_eq!((c.head_dim(), c.type_vocab_size), (64, 2));
    c.validate().unwrap();
    snapshot!("bert_base_uncased_config", c.to_string());
}

#[test]
fn the_model_folders_config_is_minilm() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let c = BertConfig::from_file(resolve_model_dir(None).unwrap(), EncoderOptions::bert()).unwrap();
    assert_eq!((c.vocab_size, c.hidden_size, c.num_attention_heads, c.num_hidden_layers), (30522, 384, 12, 6));
    assert_eq!((c.intermediate_size, c.max_position_embeddings, c.hidden_act), (1536, 512, Activation::Gelu));
    assert_eq!(c.type_vocab_size, 2);
}

/// `text` written to the file `name` in `dir`.
fn write_in(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[rstest]
#[case::hidden_not_divisible(r#"{"vocab_size": 10, "hidden_size": 30, "num_attention_heads": 4, "num_hidden_layers": 1, "intermediate_size": 8, "max_position_embeddings": 8}"#, "not divisible")]
#[case::zero_heads(r#"{"vocab_size": 10, "hidden_size": 32, "num_attention_heads": 0, "num_hidden_layers": 1, "intermediate_size": 8, "max_position_embeddings": 8}"#, "must be positive")]
#[case::missing_field(r#"{"vocab_size": 10}"#, "missing field")]
#[case::not_json("this is not json", "not a valid BERT configuration")]
#[case::truncated(r#"{"vocab_size": 10, "hidden_"#, "not a valid BERT configuration")]
#[case::unknown_activation(r#"{"vocab_size": 10, "hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 1, "intermediate_size": 8, "max_position_embeddings": 8, "hidden_act": "swish"}"#, "unknown variant `swish`")]
fn bad_configs_are_clear_errors(#[case] json: &str, #[case] expected: &str) {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let dir = common::TestDir::new("bad-config");
    let path = write_in(&dir, "config.json", json);
    let err = format!("{:#}", BertConfig::from_file(&path, EncoderOptions::bert()).unwrap_err());
    assert!(err.contains(expected), "expected {expected:?} in: {err}");
}

/// An unknown activation fails when `config.json` is read, in one line that names the file, the bad
/// name and every accepted one.
#[test]
fn an_unknown_activation_names_the_accepted_ones() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let json = r#"{"vocab_size": 10, "hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 1,
        "intermediate_size": 8, "max_position_embeddings": 8, "hidden_act": "swish"}"#;
    let dir = common::TestDir::new("activation-config");
    let path = write_in(&dir, "activation-config.json", json);
    let err = format!("{:#}", BertConfig::from_file(&path, EncoderOptions::bert()).unwrap_err());
    assert!(!err.contains('\n'), "one line: {err}");
    for needed in ["activation-config.json", "swish", "`gelu`", "`gelu_new`", "`gelu_pytorch_tanh`", "`relu`"] {
        assert!(err.contains(needed), "expected {needed:?} in: {err}");
    }
    // And each accepted name parses to its activation.
    for (name, activation) in [
        ("gelu", Activation::Gelu),
        ("gelu_new", Activation::GeluTanh),
        ("gelu_pytorch_tanh", Activation::GeluTanh),
        ("relu", Activation::Relu),
    ] {
        let json = json.replace("swish", name);
        assert_eq!(BertConfig::from_json_str(&json, EncoderOptions::bert()).unwrap().hidden_act, activation);
    }
}

#[test]
fn a_missing_config_names_the_fix() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let err = format!("{:#}", BertConfig::from_file("/nonexistent/config.json", EncoderOptions::bert()).unwrap_err());
    assert!(err.contains("make setup"), "unexpected error: {err}");
}

#[test]
fn num_labels_comes_from_id2label() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let json = r#"{"vocab_size": 10, "hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 1,
        "intermediate_size": 8, "max_position_embeddings": 8, "id2label": {"0": "a", "1": "b", "2": "c"}}"#;
    assert_eq!(BertConfig::from_json_str(json, EncoderOptions::bert()).unwrap().num_labels, 3);
}

#[rstest]
fn token_embedding_maps_ids_to_vectors(
    #[values(1, 3)] batch: i64,
    #[values(1, 5, 17)] seq: i64,
    #[values(BertConfig::bert_base_uncased(EncoderOptions::book()), BertConfig::tiny(EncoderOptions::book()))]
    config: BertConfig,
) {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let embedding = token_embedding(vs.root(), &config);
    assert_eq!(embedding.ws.size(), [config.vocab_size, config.hidden_size]);
    let ids = tch::Tensor::randint(config.vocab_size, [batch, seq], (tch::Kind::Int64, Device::Cpu));
    let x = embedding.forward(&ids);
    assert_eq!(x.size(), [batch, seq, config.hidden_size]);
    // A lookup table: row i of the output is row ids[i] of the table.
    let id = ids.int64_value(&[0, 0]);
    common::assert_close(&x.get(0).get(0), &embedding.ws.get(id), 0.0);
}

#[test]
fn token_embedding_shapes_snapshot() {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let config = BertConfig::bert_base_uncased(EncoderOptions::book());
    let embedding = token_embedding(vs.root(), &config);
    let ids = common::tokenizer().encode(TEXT, false).unwrap().ids_tensor(Device::Cpu);
    let x = embedding.forward(&ids);
    snapshot!(
        "token_embedding_shapes",
        format!("input_ids {}\nembedding table {}\ninputs_embeds {}", shape(&ids), shape(&embedding.ws), shape(&x))
    );
}
