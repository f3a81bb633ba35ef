//! Chapter section 8: the causal mask of the decoder.
mod common;

use rstest::rstest;
use tch::nn;
use tch::{Device, Kind, Tensor};
use transformer_anatomy::inspect::{shape, values};
use transformer_anatomy::scaled_dot_product::{apply_mask, attention_with_weights};
use transformer_anatomy::{
    attention_scores, attention_weights, causal_mask, Attention, BertConfig, EncoderOptions, FusedMultiHeadAttention,
    Pass,
};

#[test]
fn the_mask_is_lower_triangular_ones() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
    let mask = causal_mask(4, Device::Cpu);
    let rows: Vec<Vec<f64>> = (0..4).map(|i| values(&mask.get(i))).collect();
    assert_eq!(rows, [[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]]);
}

#[rstest]
fn future_positions_get_exactly_zero_weight(#[values(1, 2)] batch: i64, #[values(1, 5, 40)] seq: i64) {
    let _generator = common::seed();
    let x = Tensor::randn([batch, seq, 16], (Kind::Float, Device::Cpu));
    let mask = causal_mask(seq, Device::Cpu);
    let masked = apply_mask(&attention_scores(&x, &x), &mask);
    let weights = attention_weights(&masked);
    let above = weights.triu(1);
    assert_eq!(above.abs().sum(Kind::Double).double_value(&[]), 0.0);
    let sums = weights.sum_dim_intlist(-1, false, Kind::Float);
    common::assert_close(&sums, &sums.ones_like(), 1e-5);
    // The first token can only look at itself.
    assert_eq!(weights.double_value(&[0, 0, 0]), 1.0);
}

#[test]
fn masked_scores_are_minus_infinity_above_the_diagonal_only() {
    let _generator = common::seed();
    let x = Tensor::randn([1, 5, 8], (Kind::Float, Device::Cpu));
    let masked = apply_mask(&attention_scores(&x, &x), &causal_mask(5, Device::Cpu));
    for i in 0..5 {
        for j in 0..5 {
            let v = masked.double_value(&[0, i, j]);
            assert_eq!(v == f64::NEG_INFINITY, j > i, "position ({i}, {j}) = {v}");
        }
    }
}

#[test]
fn an_output_does_not_depend_on_later_tokens() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let attention = FusedMultiHeadAttention::new(vs.root(), &config.layer());
    let x = Tensor::randn([1, 6, config.hidden_size], (Kind::Float, Device::Cpu));
    let changed =
        Tensor::cat(&[x.narrow(1, 0, 3), Tensor::randn([1, 3, config.hidden_size], (Kind::Float, Device::Cpu))], 1);
    let mask = causal_mask(6, Device::Cpu);
    let a = attention.forward(&x, &x, Some(&mask), Pass::EVAL).output;
    let b = attention.forward(&changed, &changed, Some(&mask), Pass::EVAL).output;
    common::assert_close(&a.narrow(1, 0, 3), &b.narrow(1, 0, 3), 1e-6);
    assert!(common::max_abs_diff(&a.narrow(1, 3, 3), &b.narrow(1, 3, 3)) > 1e-4);
}

#[test]
fn causal_attention_equals_libtorchs_is_causal() {
    let _generator = common::seed();
    let (q, k, v) = (
        Tensor::randn([2, 7, 16], (Kind::Float, Device::Cpu)),
        Tensor::randn([2, 7, 16], (Kind::Float, Device::Cpu)),
        Tensor::randn([2, 7, 16], (Kind::Float, Device::Cpu)),
    );
    let (ours, _) = attention_with_weights(&q, &k, &v, Some(&causal_mask(7, Device::Cpu)));
    let theirs = Tensor::scaled_dot_product_attention(&q, &k, &v, None::<Tensor>, 0.0, true, None, false);
    common::assert_close(&ours, &theirs, 1e-5);
}

#[test]
fn causal_mask_shapes_snapshot() {
    let _generator = common::seed();
    let x = Tensor::randn([1, 5, 768], (Kind::Float, Device::Cpu));
    let mask = causal_mask(5, Device::Cpu);
    let masked = apply_mask(&attention_scores(&x, &x), &mask);
    snapshot!(
        "causal_mask_shapes",
        format!(
            "mask {}\nmasked scores {}\nweights {}",
            shape(&mask),
            shape(&masked),
            shape(&attention_weights(&masked))
        )
    );
}
