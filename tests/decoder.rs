//! Chapter section 8, continued: masks, sinusoidal positions, cross-attention, the decoder and the whole
//! encoder-decoder Transformer.
mod common;

use rstest::rstest;
use tch::nn;
use tch::{Device, Kind, Tensor};
use transformer_anatomy::decoding::{beam_search, greedy, BeamOptions};
use transformer_anatomy::inspect::{shape, values};
use transformer_anatomy::{
    causal_mask, decoder_mask, padding_mask, sinusoidal_positions, Activation, Attention, BertConfig, EncoderDecoder,
    EncoderOptions, FusedMultiHeadAttention, LayerConfig, LayerNormPlacement, MultiHeadAttention, Pass, Seq2SeqConfig,
    TransformerDecoderLayer,
};

fn randn(shape: &[i64]) -> Tensor {
    Tensor::randn(shape, (Kind::Float, Device::Cpu))
}

fn ids(values: &[i64]) -> Tensor {
    Tensor::from_slice(values).view([1, values.len() as i64])
}

#[test]
fn padding_and_decoder_masks() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let target = ids(&[6, 7, 8, 0, 0]);
    assert_eq!(padding_mask(&target, 0).size(), [1, 1, 5]);
    let mask = decoder_mask(&target, 0);
    assert_eq!(mask.size(), [1, 5, 5]);
    let row3: Vec<f64> = values(&mask.get(0).get(3));
    assert_eq!(row3, [1.0, 1.0, 1.0, 0.0, 0.0], "row 3 sees the past but not the padding");
    let row1: Vec<f64> = values(&mask.get(0).get(1));
    assert_eq!(row1, [1.0, 1.0, 0.0, 0.0, 0.0], "row 1 does not see the future");
}

#[test]
fn sinusoidal_positions_follow_the_formula() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let (max_len, d) = (50, 16);
    let pe = sinusoidal_positions(max_len, d, Device::Cpu);
    assert_eq!(pe.size(), [max_len, d]);
    // Position 0 is sin(0), cos(0), sin(0), ...
    assert_eq!(values(&pe.get(0)), [0.0, 1.0].repeat(8));
    for (pos, i) in [(1, 0), (7, 3), (49, 7), (23, 5)] {
        let angle = pos as f64 / 10000f64.powf(2.0 * i as f64 / d as f64);
        assert!((pe.double_value(&[pos, 2 * i]) - angle.sin()).abs() < 1e-5, "sin at ({pos}, {i})");
        assert!((pe.double_value(&[pos, 2 * i + 1]) - angle.cos()).abs() < 1e-5, "cos at ({pos}, {i})");
    }
}

#[rstest]
fn cross_attention_weights_are_rectangular(
    #[values(1, 3)] batch: i64,
    #[values((4, 7), (6, 2), (5, 5))] lengths: (i64, i64),
) {
    let _generator = common::seed();
    let (target_len, source_len) = lengths;
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let fused = FusedMultiHeadAttention::new(vs.root() / "fused", &config.layer());
    let mut per_head = MultiHeadAttention::new(vs.root() / "per_head", &config.layer());
    per_head.copy_from_fused(&fused);
    let (decoder_states, memory) = (randn(&[batch, target_len, 32]), randn(&[batch, source_len, 32]));
    let out = fused.forward(&decoder_states, &memory, None, Pass::WEIGHTS);
    let (out, weights) = (out.output, out.weights.unwrap());
    assert_eq!(out.size(), [batch, target_len, 32]);
    assert_eq!(weights.size(), [batch, 4, target_len, source_len]);
    let out2 = per_head.forward(&decoder_states, &memory, None, Pass::WEIGHTS);
    let (out2, weights2) = (out2.output, out2.weights.unwrap());
    common::assert_close(&out, &out2, 1e-5);
    common::assert_close(&weights, &weights2, 1e-5);
}

/// Inputs of the wrong rank or size are errors from the checked call, for both implementations, where the
/// unchecked one would abort inside LibTorch.
#[rstest]
#[case::memory_without_batch(&[2, 3, 32], &[5, 32], None, "the key/value input has shape [5, 32]")]
#[case::query_without_batch(&[3, 32], &[2, 5, 32], None, "the query input has shape [3, 32]")]
#[case::wrong_hidden(&[2, 3, 32], &[2, 5, 16], None, "[batch, seq, 32]")]
#[case::batches_differ(&[2, 3, 32], &[3, 5, 32], None, "batch")]
#[case::mask_for_the_wrong_source(&[2, 3, 32], &[2, 5, 32], Some(&[2, 1, 4][..]), "does not broadcast")]
fn wrong_cross_attention_inputs_are_errors(
    #[case] query: &[i64],
    #[case] memory: &[i64],
    #[case] mask: Option<&[i64]>,
    #[case] expected: &str,
) {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let fused = FusedMultiHeadAttention::new(vs.root() / "fused", &config.layer());
    let per_head = MultiHeadAttention::new(vs.root() / "per_head", &config.layer());
    let mask = mask.map(|m| Tensor::ones(m, (Kind::Float, Device::Cpu)));
    let (q, m) = (randn(query), randn(memory));
    for err in [
        fused.try_forward(&q, &m, mask.as_ref(), Pass::EVAL).unwrap_err(),
        per_head.try_forward(&q, &m, mask.as_ref(), Pass::EVAL).unwrap_err(),
    ] {
        let err = format!("{err:#}");
        assert!(err.contains(expected), "expected {expected:?} in: {err}");
    }
    // The checked call gives the unchecked one's result on good inputs.
    let (q, m) = (randn(&[2, 3, 32]), randn(&[2, 5, 32]));
    common::assert_close(
        &fused.try_forward(&q, &m, None, Pass::EVAL).unwrap().output,
        &fused.forward(&q, &m, None, Pass::EVAL).output,
        0.0,
    );
}

#[test]
fn padded_source_tokens_get_exactly_zero_weight() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let attention = FusedMultiHeadAttention::new(vs.root(), &config.layer());
    let source = Tensor::from_slice(&[4i64, 5, 6, 0, 0, 9, 9, 9, 9, 9]).view([2, 5]);
    let mask = padding_mask(&source, 0);
    let weights =
        attention.forward(&randn(&[2, 3, 32]), &randn(&[2, 5, 32]), Some(&mask), Pass::WEIGHTS).weights.unwrap();
    let padded = weights.get(0).narrow(-1, 3, 2);
    assert_eq!(padded.abs().sum(Kind::Double).double_value(&[]), 0.0);
    let sums = weights.sum_dim_intlist(-1, false, Kind::Float);
    common::assert_close(&sums, &sums.ones_like(), 1e-5);
}

#[rstest]
fn decoder_layer_shapes_and_causality(
    #[values(LayerNormPlacement::Pre, LayerNormPlacement::Post)] placement: LayerNormPlacement,
) {
    let _generator = common::seed();
    let config = BertConfig { hidden_act: Activation::Relu, ..BertConfig::tiny(EncoderOptions::book()) };
    let vs = nn::VarStore::new(Device::Cpu);
    let layer = TransformerDecoderLayer::new(vs.root(), &LayerConfig { placement, ..config.layer() });
    let (x, memory) = (randn(&[2, 6, 32]), randn(&[2, 9, 32]));
    let mask = causal_mask(6, Device::Cpu);
    let out = layer.forward(&x, &memory, Some(&mask), None, Pass::WEIGHTS, None);
    let (self_weights, cross_weights) = (out.self_weights.unwrap(), out.cross_weights.unwrap());
    assert_eq!(out.hidden_state.size(), [2, 6, 32]);
    assert_eq!(self_weights.size(), [2, 4, 6, 6]);
    assert_eq!(cross_weights.size(), [2, 4, 6, 9]);
    assert_eq!(self_weights.triu(1).abs().sum(Kind::Double).double_value(&[]), 0.0, "future positions get weight 0");
}

#[test]
fn the_dummy_run_gives_log_probabilities() {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let model = EncoderDecoder::new(&vs, &Seq2SeqConfig::paper(10, 10)).unwrap();
    let (source, target) = (ids(&[1, 2, 3, 4, 5]), ids(&[6, 7, 8, 0, 0]));
    let log_probs = model.try_forward(&source, &target, false).unwrap();
    assert_eq!(log_probs.size(), [1, 5, 10]);
    let sums = log_probs.exp().sum_dim_intlist(-1, false, Kind::Double);
    common::assert_close(&sums, &sums.ones_like(), 1e-5);
    assert_eq!(log_probs.argmax(-1, false).size(), [1, 5]);
}

#[test]
fn an_output_does_not_change_when_later_target_tokens_do() {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let model = EncoderDecoder::new(&vs, &Seq2SeqConfig::tiny(12, 12)).unwrap();
    let source = ids(&[3, 4, 5, 6]);
    let a = model.forward(&source, &ids(&[1, 7, 8, 9, 10, 11]), false);
    let b = model.forward(&source, &ids(&[1, 7, 8, 2, 5, 3]), false);
    common::assert_close(&a.narrow(1, 0, 3), &b.narrow(1, 0, 3), 1e-5);
    assert!(common::max_abs_diff(&a.narrow(1, 3, 3), &b.narrow(1, 3, 3)) > 1e-4);
    // But every output depends on the source.
    let c = model.forward(&ids(&[3, 4, 5, 7]), &ids(&[1, 7, 8, 9, 10, 11]), false);
    assert!(common::max_abs_diff(&a.narrow(1, 0, 1), &c.narrow(1, 0, 1)) > 1e-5);
}

#[test]
fn weights_are_xavier_uniform_and_biases_zero() {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let config = Seq2SeqConfig::tiny(12, 20);
    EncoderDecoder::new(&vs, &config).unwrap();
    let vars = vs.variables();
    let w = &vars["generator.weight"]; // [20, 32]
    let bound = (6.0f64 / (20 + 32) as f64).sqrt();
    assert!(w.abs().max().double_value(&[]) <= bound);
    assert!(w.abs().max().double_value(&[]) > 0.8 * bound);
    assert_eq!(vars["generator.bias"].abs().sum(Kind::Double).double_value(&[]), 0.0);
    assert_eq!(vars["decoder.layer_norm.weight"].sum(Kind::Double).double_value(&[]), 32.0, "LayerNorm scales stay 1");
}

#[test]
fn greedy_decoding_feeds_back_what_it_wrote() {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let model = EncoderDecoder::new(&vs, &Seq2SeqConfig::tiny(12, 12)).unwrap();
    let decoded = greedy(&model, &ids(&[3, 4, 5, 6]), 1, 2, 6, true).unwrap().remove(0);
    let steps = &decoded.steps;
    assert!(!steps.is_empty() && steps.len() <= 6);
    assert_eq!(steps[0].decoder_input, [1]);
    for pair in steps.windows(2) {
        let mut expected = pair[0].decoder_input.clone();
        expected.push(pair[0].next_token);
        assert_eq!(pair[1].decoder_input, expected, "each step's input is the previous input plus its choice");
    }
    // Each choice is the argmax of a full forward pass over the same prefix, padding (0) and <s> (1)
    // left out: a decoder never writes them.
    let last = steps.last().unwrap();
    let log_probs = model.forward(&ids(&[3, 4, 5, 6]), &ids(&last.decoder_input), false);
    let t = last.decoder_input.len() as i64 - 1;
    let allowed = log_probs.get(0).get(t).index_fill(0, &ids(&[0, 1]).view([-1]), f64::NEG_INFINITY);
    assert_eq!(allowed.argmax(-1, false).int64_value(&[]), last.next_token);
    assert!(steps.iter().all(|s| s.log_prob <= 0.0 && s.next_token > 1));
    let written: Vec<i64> = steps.iter().map(|s| s.next_token).filter(|&t| t != 2).collect();
    assert_eq!(decoded.tokens, written);
    assert!((decoded.log_prob - steps.iter().map(|s| s.log_prob).sum::<f64>()).abs() < 1e-9);
}

#[rstest]
#[case::nothing_asked(0, "at least one new token")]
#[case::past_the_positions(65, "more than the 64 positions")]
fn decoding_lengths_the_model_cannot_cover_are_errors(#[case] max_new_tokens: i64, #[case] expected: &str) {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let vs = nn::VarStore::new(Device::Cpu);
    let model = EncoderDecoder::new(&vs, &Seq2SeqConfig::tiny(12, 12)).unwrap();
    let greedy_err = greedy(&model, &ids(&[3, 4]), 1, 2, max_new_tokens, true).unwrap_err();
    let options = BeamOptions { width: 2, length_penalty: 0.6, max_new_tokens, use_cache: true };
    let beam_err = beam_search(&model, &ids(&[3, 4]), 1, 2, options).unwrap_err();
    for err in [greedy_err, beam_err] {
        assert!(format!("{err:#}").contains(expected), "expected {expected:?} in: {err:#}");
    }
    // The longest request that fits runs (64 new tokens: the decoder's input reaches position 63).
    assert!(greedy(&model, &ids(&[3, 4]), 1, 2, 64, false).is_ok());
}

#[rstest]
#[case::source_id_too_large(ids(&[1, 12]), ids(&[1]), "outside the vocabulary")]
#[case::target_too_long(ids(&[1, 2]), Tensor::ones([1, 65], (Kind::Int64, Device::Cpu)), "covers only 64")]
#[case::empty_source(Tensor::zeros([1, 0], (Kind::Int64, Device::Cpu)), ids(&[1]), "seq ≥ 1")]
fn bad_ids_are_clear_errors(#[case] source: Tensor, #[case] target: Tensor, #[case] expected: &str) {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let vs = nn::VarStore::new(Device::Cpu);
    let model = EncoderDecoder::new(&vs, &Seq2SeqConfig::tiny(12, 12)).unwrap();
    let err = format!("{:#}", model.try_forward(&source, &target, false).unwrap_err());
    assert!(err.contains(expected), "expected {expected:?} in: {err}");
}

#[test]
fn an_odd_d_model_is_refused() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let vs = nn::VarStore::new(Device::Cpu);
    let config = Seq2SeqConfig { d_model: 33, num_heads: 3, ..Seq2SeqConfig::tiny(12, 12) };
    assert!(EncoderDecoder::new(&vs, &config).unwrap_err().to_string().contains("even"));
}

#[test]
fn decoder_shapes_snapshot() {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let model = EncoderDecoder::new(&vs, &Seq2SeqConfig::paper(10, 10)).unwrap();
    let (source, target) = (ids(&[1, 2, 3, 4, 5]), ids(&[6, 7, 8, 0, 0]));
    let source_mask = padding_mask(&source, 0);
    let target_mask = decoder_mask(&target, 0);
    let memory = model.encode(&source, Some(&source_mask), false);
    let states = model.decode(&memory, Some(&source_mask), &target, Some(&target_mask), false).hidden_state;
    let cross = model.decoder.layers[0].forward(
        &model.target_embedding.positions.narrow(0, 0, 3).unsqueeze(0),
        &memory,
        None,
        Some(&source_mask),
        Pass::WEIGHTS,
        None,
    );
    snapshot!(
        "decoder_shapes",
        format!(
            "source mask {}\ntarget mask {}\npositional encoding {}\nmemory {}\ndecoder states {}\nlog-probabilities {}\ncross-attention weights (3 target, 5 source) {}",
            shape(&source_mask),
            shape(&target_mask),
            shape(&model.target_embedding.positions),
            shape(&memory),
            shape(&states),
            shape(&model.generate(&states)),
            shape(cross.cross_weights.as_ref().unwrap())
        )
    );
}
