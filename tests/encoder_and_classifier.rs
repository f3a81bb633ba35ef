//! Chapter section 7: the whole encoder and a classification head, and what bad input does to them.
mod common;

use rstest::rstest;
use tch::nn::{self, ModuleT};
use tch::{Device, Kind, Tensor};
use transformer_anatomy::inspect::shape;
use transformer_anatomy::{BertConfig, EncoderOptions, Pass, TransformerEncoder, TransformerForSequenceClassification};

#[rstest]
fn the_encoder_keeps_one_vector_per_token(
    #[values(1, 2)] batch: i64,
    #[values(1, 5, 16)] seq: i64,
    #[values(EncoderOptions::book(), EncoderOptions::bert())] options: EncoderOptions,
) {
    let _generator = common::seed();
    let config = BertConfig::tiny(options);
    let vs = nn::VarStore::new(Device::Cpu);
    let encoder = TransformerEncoder::new(vs.root(), &config).unwrap();
    assert_eq!(encoder.stack.layers.len(), 2);
    let ids = Tensor::randint(config.vocab_size, [batch, seq], (Kind::Int64, Device::Cpu));
    let out = encoder.try_forward(&ids, None, None, false).unwrap().last_hidden_state;
    assert_eq!(out.size(), [batch, seq, config.hidden_size]);
    common::assert_close(&out, &encoder.forward_t(&ids, false), 0.0);
}

#[test]
fn the_encoder_is_its_layers_applied_in_turn() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let encoder = TransformerEncoder::new(vs.root(), &config).unwrap();
    let ids = Tensor::randint(config.vocab_size, [1, 5], (Kind::Int64, Device::Cpu));
    let mut x = encoder.embeddings.forward_t(&ids, false);
    for layer in &encoder.stack.layers {
        x = layer.forward_t(&x, false);
    }
    common::assert_close(&encoder.forward_t(&ids, false), &x, 0.0);
    let out = encoder.stack.forward(&encoder.embeddings.forward_t(&ids, false), None, Pass::WEIGHTS);
    common::assert_close(&out.last_hidden_state, &x, 0.0);
    assert_eq!(out.attentions.len(), 2);
    assert_eq!(out.attentions[1].size(), [1, config.num_attention_heads, 5, 5]);
}

#[rstest]
fn the_classifier_gives_one_score_per_label(#[values(1, 4)] batch: i64, #[values(2, 3)] num_labels: i64) {
    let _generator = common::seed();
    let config = BertConfig { num_labels, ..BertConfig::tiny(EncoderOptions::book()) };
    let vs = nn::VarStore::new(Device::Cpu);
    let model = TransformerForSequenceClassification::new(vs.root(), &config).unwrap();
    let ids = Tensor::randint(config.vocab_size, [batch, 5], (Kind::Int64, Device::Cpu));
    assert_eq!(model.try_forward(&ids, false).unwrap().size(), [batch, num_labels]);
}

#[test]
fn the_classifier_reads_only_the_first_token() {
    let _generator = common::seed();
    let config = BertConfig { num_labels: 3, ..BertConfig::tiny(EncoderOptions::book()) };
    let vs = nn::VarStore::new(Device::Cpu);
    let model = TransformerForSequenceClassification::new(vs.root(), &config).unwrap();
    let hidden = Tensor::randn([2, 6, config.hidden_size], (Kind::Float, Device::Cpu));
    let logits = model.head(&hidden, false);
    // Changing every token but the first leaves the logits alone...
    let others_changed = Tensor::cat(
        &[hidden.narrow(1, 0, 1), Tensor::randn([2, 5, config.hidden_size], (Kind::Float, Device::Cpu))],
        1,
    );
    common::assert_close(&model.head(&others_changed, false), &logits, 0.0);
    // ...changing the first one does not.
    let first_changed = Tensor::cat(
        &[Tensor::randn([2, 1, config.hidden_size], (Kind::Float, Device::Cpu)), hidden.narrow(1, 1, 5)],
        1,
    );
    assert!(common::max_abs_diff(&model.head(&first_changed, false), &logits) > 1e-4);
}

#[test]
fn the_classifier_has_hugging_face_names() {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    TransformerForSequenceClassification::new(vs.root(), &BertConfig::tiny(EncoderOptions::bert())).unwrap();
    let names = vs.variables();
    for name in [
        "bert.embeddings.word_embeddings.weight",
        "bert.encoder.layer.1.attention.self.query.weight",
        "classifier.weight",
        "classifier.bias",
    ] {
        assert!(names.contains_key(name), "missing {name}");
    }
    assert_eq!(names.len(), 5 + 2 * 16 + 2, "embeddings (with token types), 2 layers, classifier");
}

#[test]
fn eval_mode_is_deterministic_and_training_mode_is_not() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let encoder = TransformerEncoder::new(vs.root(), &config).unwrap();
    let ids = Tensor::randint(config.vocab_size, [2, 8], (Kind::Int64, Device::Cpu));
    common::assert_close(&encoder.forward_t(&ids, false), &encoder.forward_t(&ids, false), 0.0);
    assert!(common::max_abs_diff(&encoder.forward_t(&ids, true), &encoder.forward_t(&ids, false)) > 1e-4);
}

fn error_of(ids: Tensor, mask: Option<Tensor>) -> String {
    let vs = nn::VarStore::new(Device::Cpu);
    let encoder = TransformerEncoder::new(vs.root(), &BertConfig::tiny(EncoderOptions::book())).unwrap();
    format!("{:#}", encoder.try_forward(&ids, None, mask.as_ref(), false).unwrap_err())
}

#[rstest]
#[case::too_long(Tensor::zeros([1, 17], (Kind::Int64, Device::Cpu)), "position embeddings for only 16")]
#[case::id_too_large(Tensor::from_slice(&[1i64, 100]).view([1, 2]), "token id 100 is outside the vocabulary")]
#[case::negative_id(Tensor::from_slice(&[-3i64, 1]).view([1, 2]), "token id -3 is outside the vocabulary")]
#[case::no_tokens(Tensor::zeros([1, 0], (Kind::Int64, Device::Cpu)), "no tokens")]
#[case::one_axis(Tensor::from_slice(&[1i64, 2]), "shape [batch, seq]")]
#[case::floats(Tensor::ones([1, 3], (Kind::Float, Device::Cpu)), "must be integers")]
fn bad_ids_are_clear_errors(#[case] ids: Tensor, #[case] expected: &str) {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let err = error_of(ids, None);
    assert!(err.contains(expected), "expected {expected:?} in: {err}");
}

#[test]
fn a_mask_of_the_wrong_shape_is_a_clear_error() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let err = error_of(
        Tensor::ones([1, 4], (Kind::Int64, Device::Cpu)),
        Some(Tensor::ones([5, 5], (Kind::Int64, Device::Cpu))),
    );
    assert!(err.contains("does not broadcast"), "unexpected error: {err}");
}

#[test]
fn a_hidden_size_the_heads_do_not_divide_is_refused() {
    let _generator = common::seed();
    let config = BertConfig { hidden_size: 30, num_attention_heads: 4, ..BertConfig::tiny(EncoderOptions::book()) };
    let vs = nn::VarStore::new(Device::Cpu);
    let err = TransformerEncoder::new(vs.root(), &config).unwrap_err().to_string();
    assert!(err.contains("not divisible by num_attention_heads"), "unexpected error: {err}");
}

#[test]
fn encoder_and_classifier_shapes_snapshot() {
    let _generator = common::seed();
    let config = BertConfig { num_labels: 3, ..BertConfig::bert_base_uncased(EncoderOptions::book()) };
    let vs = nn::VarStore::new(Device::Cpu);
    let model = TransformerForSequenceClassification::new(vs.root(), &config).unwrap();
    let ids = common::tokenizer().encode("time flies like an arrow", false).unwrap().ids_tensor(Device::Cpu);
    let hidden = model.encoder.try_forward(&ids, None, None, false).unwrap().last_hidden_state;
    snapshot!(
        "encoder_and_classifier_shapes",
        format!(
            "input_ids {}\nencoder layers {}\nencoder output {}\nclassifier logits {}",
            shape(&ids),
            model.encoder.stack.layers.len(),
            shape(&hidden),
            shape(&model.head(&hidden, false))
        )
    );
}
