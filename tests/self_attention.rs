//! Chapter section 2: scaled dot-product attention, one operation at a time.
mod common;

use rstest::rstest;
use tch::{Device, Kind, Tensor};
use transformer_anatomy::inspect::{shape, values};
use transformer_anatomy::scaled_dot_product::{apply_mask, attention_with_weights};
use transformer_anatomy::{attend, attention_scores, attention_weights, causal_mask, scaled_dot_product_attention};

fn randn(shape: &[i64]) -> Tensor {
    Tensor::randn(shape, (Kind::Float, Device::Cpu))
}

fn libtorch_sdpa(q: &Tensor, k: &Tensor, v: &Tensor, mask: Option<&Tensor>) -> Tensor {
    Tensor::scaled_dot_product_attention(q, k, v, mask.map(|m| m.ne(0)), 0.0, false, None, false)
}

#[rstest]
fn scores_are_scaled_dot_products(
    #[values(1, 4)] batch: i64,
    #[values(1, 5, 64)] seq: i64,
    #[values(8, 768)] dim: i64,
) {
    let _generator = common::seed();
    let (q, k) = (randn(&[batch, seq, dim]), randn(&[batch, seq, dim]));
    let scores = attention_scores(&q, &k);
    assert_eq!(scores.size(), [batch, seq, seq]);
    // One entry by hand: the dot product of query 0 and key (seq - 1) of the last batch item, over √dim.
    let expected = (q.get(batch - 1).get(0) * k.get(batch - 1).get(seq - 1)).sum(Kind::Double).double_value(&[])
        / (dim as f64).sqrt();
    let got = scores.double_value(&[batch - 1, 0, seq - 1]);
    assert!((got - expected).abs() < 1e-3 * expected.abs().max(1.0), "got {got}, expected {expected}");
}

#[test]
fn scores_with_a_head_axis_match_the_three_axis_version() {
    let _generator = common::seed();
    let (q, k) = (randn(&[2, 3, 5, 16]), randn(&[2, 3, 5, 16]));
    let four = attention_scores(&q, &k);
    let three = attention_scores(&q.view([6, 5, 16]), &k.view([6, 5, 16]));
    common::assert_close(&four.view([6, 5, 5]), &three, 1e-5);
}

#[rstest]
fn softmax_rows_are_probabilities(#[values(1, 3)] batch: i64, #[values(1, 5, 50)] seq: i64) {
    let _generator = common::seed();
    let weights = attention_weights(&(randn(&[batch, seq, seq]) * 10));
    let sums = weights.sum_dim_intlist(-1, false, Kind::Float);
    common::assert_close(&sums, &Tensor::ones([batch, seq], (Kind::Float, Device::Cpu)), 1e-5);
    assert!(values(&weights).iter().all(|&w| (0.0..=1.0).contains(&w)));
}

#[rstest]
fn attend_is_a_weighted_sum_of_values(#[values(1, 2)] batch: i64, #[values(1, 5)] seq: i64) {
    let _generator = common::seed();
    let weights = attention_weights(&randn(&[batch, seq, seq]));
    let v = randn(&[batch, seq, 768]);
    let out = attend(&weights, &v);
    assert_eq!(out.size(), [batch, seq, 768]);
    // Row 0 of the output, computed as an explicit sum over the values.
    let mut expected = Tensor::zeros([768], (Kind::Float, Device::Cpu));
    for j in 0..seq {
        expected += v.get(0).get(j) * weights.double_value(&[0, 0, j]);
    }
    common::assert_close(&out.get(0).get(0), &expected, 1e-4);
}

#[test]
fn known_values_match_pytorch() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
                                          // q = k = v = arange(20).reshape(1, 5, 4) / 10; PyTorch prints these rows for this input.
    let x = Tensor::arange(20, (Kind::Float, Device::Cpu)).reshape([1, 5, 4]) / 10.0;
    let out = scaled_dot_product_attention(&x, &x, &x, None);
    let row0 = values(&out.get(0).get(0));
    for (got, want) in row0.iter().zip([0.8954, 0.9954, 1.0954, 1.1954]) {
        assert!((got - want).abs() < 1e-4, "row 0: got {row0:?}");
    }
    let causal = scaled_dot_product_attention(&x, &x, &x, Some(&causal_mask(5, Device::Cpu)));
    let row1 = values(&causal.get(0).get(1));
    for (got, want) in row1.iter().zip([0.2433, 0.3433, 0.4433, 0.5433]) {
        assert!((got - want).abs() < 1e-4, "causal row 1: got {row1:?}");
    }
}

#[rstest]
#[case::bert_base(1, 5, 768)]
#[case::batched(8, 5, 768)]
#[case::long(2, 128, 64)]
#[case::tiny(3, 7, 8)]
fn equals_libtorchs_scaled_dot_product_attention(
    #[case] batch: i64,
    #[case] seq: i64,
    #[case] dim: i64,
    #[values(false, true)] causal: bool,
) {
    let _generator = common::seed();
    let (q, k, v) = (randn(&[batch, seq, dim]), randn(&[batch, seq, dim]), randn(&[batch, seq, dim]));
    let mask = causal.then(|| causal_mask(seq, Device::Cpu));
    let ours = scaled_dot_product_attention(&q, &k, &v, mask.as_ref());
    let theirs = libtorch_sdpa(&q, &k, &v, mask.as_ref());
    common::assert_close(&ours, &theirs, 1e-5);
    // libtorch's own causal flag agrees too.
    if causal {
        let flagged = Tensor::scaled_dot_product_attention(&q, &k, &v, None::<Tensor>, 0.0, true, None, false);
        common::assert_close(&ours, &flagged, 1e-5);
    }
}

#[test]
fn equals_libtorch_with_a_padding_mask() {
    let _generator = common::seed();
    let (q, k, v) = (randn(&[2, 6, 16]), randn(&[2, 6, 16]), randn(&[2, 6, 16]));
    // Item 0 has 4 real tokens, item 1 has all 6: mask [batch, 1, s_k].
    let mask = Tensor::from_slice(&[1i64, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1]).view([2, 1, 6]);
    let (ours, weights) = attention_with_weights(&q, &k, &v, Some(&mask));
    common::assert_close(&ours, &libtorch_sdpa(&q, &k, &v, Some(&mask)), 1e-5);
    assert_eq!(
        weights.get(0).narrow(1, 4, 2).abs().sum(Kind::Float).double_value(&[]),
        0.0,
        "padded keys get weight exactly 0"
    );
}

#[test]
fn a_fully_masked_row_gives_zero_weights_not_nan() {
    let _generator = common::seed();
    let (q, k, v) = (randn(&[1, 3, 4]), randn(&[1, 3, 4]), randn(&[1, 3, 4]));
    // Query 1 may look at nothing.
    let mask = Tensor::from_slice(&[1i64, 1, 1, 0, 0, 0, 1, 1, 1]).view([1, 3, 3]);
    let (out, weights) = attention_with_weights(&q, &k, &v, Some(&mask));
    assert_eq!(out.isnan().any().int64_value(&[]), 0, "no NaN anywhere");
    assert_eq!(values(&weights.get(0).get(1)), [0.0, 0.0, 0.0]);
    assert_eq!(values(&out.get(0).get(1)), [0.0; 4]);
    // The other rows are ordinary probabilities, and libtorch agrees on every row.
    assert!((weights.get(0).get(0).sum(Kind::Float).double_value(&[]) - 1.0).abs() < 1e-6);
    common::assert_close(&out, &libtorch_sdpa(&q, &k, &v, Some(&mask)), 1e-5);
}

#[test]
fn masking_sets_scores_to_minus_infinity() {
    let _generator = common::seed();
    let scores = randn(&[1, 4, 4]);
    let masked = apply_mask(&scores, &causal_mask(4, Device::Cpu));
    assert!(masked.double_value(&[0, 0, 1]).is_infinite() && masked.double_value(&[0, 0, 1]) < 0.0);
    assert_eq!(masked.double_value(&[0, 3, 2]), scores.double_value(&[0, 3, 2]));
}

#[test]
fn self_attention_shapes_snapshot() {
    let _generator = common::seed();
    let x = randn(&[1, 5, 768]); // the chapter's inputs_embeds
    let scores = attention_scores(&x, &x);
    let weights = attention_weights(&scores);
    let out = attend(&weights, &x);
    snapshot!(
        "self_attention_shapes",
        format!(
            "inputs_embeds {}\nscores {}\nweights {}\nattn_outputs {}",
            shape(&x),
            shape(&scores),
            shape(&weights),
            shape(&out)
        )
    );
}
