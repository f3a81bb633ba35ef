//! Checks of the decoder-side exercises: the causal mask, encoder-decoder attention (the chapter's
//! homework), a decoder layer and the sinusoidal positions.
use tch::nn::{self, Module};
use tch::{Device, Kind, Tensor};

use super::{
    broadcast_error, call, close, expect_close, expect_close_or_name, expect_rows_sum_to_one, named, parts, randn,
    told, CheckResult, Failure, Returned, Said, BOOLEAN_MASK, TRANSPOSE, ZEROS_AND_ONES,
};
use transformer_anatomy::attention::Pass;
use transformer_anatomy::config::{Activation, BertConfig, EncoderOptions};
use transformer_anatomy::exercises::support::{DecoderLayerParts, Projections};
use transformer_anatomy::inspect::max_abs_diff;
use transformer_anatomy::masks::{decoder_mask, padding_mask};
use transformer_anatomy::{Attention, TransformerDecoderLayer};

// The named mistakes of this module's checks, a constant each (`NO_EPS` for "no_eps") and a list per
// check, written from `crates/course/exercises.toml`, which declares them.
include!(concat!(env!("OUT_DIR"), "/mistakes_decoder.rs"));

/// A wrong shape of the cross-attention weights, in general and in the two ways round the shape names.
macro_rules! rectangular {
    () => {
        ": one row per target position (the queries come from the decoder), one column per source position (keys \
         from the encoder)"
    };
}
const RECTANGULAR: &str = rectangular!();
const QUERIES_FROM_THE_ENCODER_WORDS: &str = concat!(rectangular!(), "; the queries come from the encoder here");
const SELF_ATTENTION_WORDS: &str = concat!(rectangular!(), "; the keys come from the decoder here (self-attention)");

/// The padding mask used as it comes, `[batch, s]` against scores `[batch, t, s]`: LibTorch lines its `batch`
/// up with the scores' `t` (axis 1) and, as they differ, stops with its broadcast error; that error of this
/// call, for these two sizes at that axis, is the mistake (with a batch of 1 the mask broadcasts and is right).
fn mask_without_middle_axis(batch: i64, t: i64) -> [(String, Said); 2] {
    let said = named(
        MASK_WITHOUT_MIDDLE_AXIS,
        "the [batch, source] padding mask does not broadcast against the [batch, target, source] scores: give it a \
         middle axis, [batch, 1, source] (`.unsqueeze(1)`), so that it hides the same source positions from every \
         target position",
    );
    broadcast_error(batch, t, 1).map(|needle| (needle, said))
}

/// `causal_mask`: the mask's entries one by one, then the masked softmax against a softmax of each row's
/// allowed part.
/// The two functions are graded apart (a share of the points each).
pub fn causal_mask(
    causal_mask: &dyn Fn(i64, Device) -> Tensor,
    masked_softmax: &dyn Fn(&Tensor, &Tensor) -> Tensor,
) -> CheckResult {
    parts(&[&|| the_mask(&causal_mask), &|| the_masked_softmax(&masked_softmax)])
}

fn the_mask(causal_mask: &dyn Fn(i64, Device) -> Tensor) -> CheckResult {
    let drawn = Tensor::randint_low(2, 12, [1], (Kind::Int64, Device::Cpu)).int64_value(&[0]);
    for n in [1, 4, 7, drawn] {
        let returned = Returned::new(format!("causal_mask({n}, ..)"), &[n, n], ZEROS_AND_ONES);
        let mask = call(|| causal_mask(n, Device::Cpu), &[returned], &[])?;
        let ones = Tensor::ones([n, n], (Kind::Float, Device::Cpu));
        if n > 1 && close(&mask.to_kind(Kind::Float), &ones.triu(0), 0.0) {
            return Err(Failure::named(
                UPPER_TRIANGLE,
                format!(
                    "causal_mask({n}, ..) is the upper triangle (triu): row i would see the future and not the past; \
                     keep the lower one (tril)"
                ),
            ));
        }
        if close(&mask.to_kind(Kind::Float), &ones.tril(-1), 0.0) {
            return Err(Failure::named(
                NO_DIAGONAL,
                format!(
                    "causal_mask({n}, ..) leaves out the diagonal: a position may attend to itself, so row i sees \
                     columns 0..=i (tril(0), not tril(-1))"
                ),
            ));
        }
        for i in 0..n {
            for j in 0..n {
                let (got, want) = (mask.double_value(&[i, j]), if j <= i { 1.0 } else { 0.0 });
                if got != want {
                    return Err(format!(
                        "causal_mask({n}, ..)[{i}][{j}] is {got}, expected {want}: row i (a query) may see columns 0..=i, \
                         the diagonal included"
                    )
                    .into());
                }
            }
        }
    }
    Ok(())
}

fn the_masked_softmax(masked_softmax: &dyn Fn(&Tensor, &Tensor) -> Tensor) -> CheckResult {
    let (batch, n) = (2, 5);
    let scores = randn(&[batch, n, n]) * 3.0;
    let mask = Tensor::ones([n, n], (Kind::Float, Device::Cpu)).tril(0); // not the student's: checked on its own
    let returned = Returned::floats("masked_softmax(scores, mask)", &[batch, n, n]);
    let weights = call(|| masked_softmax(&scores, &mask), &[returned], &[BOOLEAN_MASK])?;
    if close(&weights, &scores.softmax(-1, Kind::Float), 1e-6) {
        return Err(Failure::named(
            MASK_IGNORED,
            "masked_softmax: the mask is not applied — these are the weights of the plain softmax, future \
             positions included"
                .into(),
        ));
    }
    if close(&weights, &(&scores * &mask).softmax(-1, Kind::Float), 1e-6) {
        return Err(Failure::named(
            MASK_MULTIPLIED,
            "masked_softmax: the scores were multiplied by the mask; a zeroed score still gets weight \
             (exp(0) = 1): set blocked scores to -inf before the softmax (`masked_fill`)"
                .into(),
        ));
    }
    let sums = weights.sum_dim_intlist(-1, false, Kind::Double);
    let future_zero =
        weights.masked_select(&mask.eq(0).expand([batch, n, n], false)).abs().max().double_value(&[]) == 0.0;
    if future_zero && !super::close(&sums, &sums.ones_like(), 1e-5) {
        return Err(Failure::named(
            MASK_AFTER_SOFTMAX,
            "masked_softmax: the future weights are 0 but the rows no longer sum to 1 — the mask was applied \
             after the softmax; block the scores with -inf before it, so the softmax shares 1 among the \
             allowed positions"
                .into(),
        ));
    }
    for b in 0..batch {
        for i in 0..n {
            for j in i + 1..n {
                let w = weights.double_value(&[b, i, j]);
                if w != 0.0 {
                    return Err(format!(
                        "masked_softmax: weight {w:.4} at batch {b}, row {i}, future column {j}; it must be exactly 0 \
                         (set blocked scores to -inf before the softmax: a score of 0 still gets weight)"
                    )
                    .into());
                }
            }
            // Row i is a softmax over columns 0..=i only.
            let expected = scores.get(b).get(i).narrow(0, 0, i + 1).softmax(0, Kind::Double);
            let got = weights.get(b).get(i).narrow(0, 0, i + 1);
            expect_close(
                &format!("masked_softmax, row {i}"),
                &got,
                &expected,
                1e-5,
                ": a softmax over the allowed positions",
            )?;
        }
    }
    expect_rows_sum_to_one("masked_softmax", &weights)
}

/// `cross_attention` (the homework): rectangular weights, padding at exactly 0, and the output of
/// libtorch's own attention kernel on the same projections.
pub fn cross_attention(
    cross_attention: &dyn Fn(&Tensor, &Tensor, &Projections, Option<&Tensor>) -> (Tensor, Tensor),
) -> CheckResult {
    let (d_model, head_dim) = (16, 8);
    let vs = nn::VarStore::new(Device::Cpu);
    let projections = Projections::new(&vs.root(), d_model, head_dim);
    for shape in [(2, 3, 5), (1, 4, 2), (3, 6, 6)] {
        cross_attention_at(cross_attention, &projections, (d_model, head_dim), shape)?;
    }
    let (decoder_states, encoder_output) = (randn(&[1, 2, d_model]), randn(&[1, 3, d_model]));
    let returns = [
        Returned::floats("output", &[1, 2, head_dim]).told(": one head_dim vector per target position"),
        Returned::floats("weights for 2 target and 3 source positions", &[1, 2, 3]).told(RECTANGULAR),
    ];
    let (output, _) = call(|| cross_attention(&decoder_states, &encoder_output, &projections, None), &returns, &[])?;
    let expected = Tensor::scaled_dot_product_attention(
        &projections.query.forward(&decoder_states),
        &projections.key.forward(&encoder_output),
        &projections.value.forward(&encoder_output),
        None::<Tensor>,
        0.0,
        false,
        None,
        false,
    );
    expect_close(
        "output without a padding mask",
        &output,
        &expected,
        1e-5,
        ": with no mask, every source position counts",
    )
}

/// One shape of `cross_attention` (`d_model → head_dim` projections): batch items, `t` target and `s` source positions, once without a mask
/// and once with the last source position of item 0 padded.
fn cross_attention_at(
    cross_attention: &dyn Fn(&Tensor, &Tensor, &Projections, Option<&Tensor>) -> (Tensor, Tensor),
    projections: &Projections,
    (d_model, head_dim): (i64, i64),
    (batch, t, s): (i64, i64, i64),
) -> CheckResult {
    let (decoder_states, encoder_output) = (randn(&[batch, t, d_model]), randn(&[batch, s, d_model]));
    // The two ways round that come out square or transposed, named when the shape shows them.
    let rectangular = |got: &[i64]| match got {
        [_, a, b] if (*a, *b) == (s, t) && s != t => named(QUERIES_FROM_THE_ENCODER, QUERIES_FROM_THE_ENCODER_WORDS),
        [_, a, b] if (*a, *b) == (t, t) && s != t => named(SELF_ATTENTION_INSTEAD, SELF_ATTENTION_WORDS),
        _ => told(RECTANGULAR),
    };
    let returns = || {
        [
            Returned::floats("output", &[batch, t, head_dim]).told(": one head_dim vector per target position"),
            Returned::floats(format!("weights for {t} target and {s} source positions"), &[batch, t, s])
                .choose(rectangular),
        ]
    };
    let [middle_axis, other_order] = mask_without_middle_axis(batch, t);
    let known =
        [TRANSPOSE, BOOLEAN_MASK, (middle_axis.0.as_str(), middle_axis.1), (other_order.0.as_str(), other_order.1)];
    let attend = |mask: Option<&Tensor>| {
        call(|| cross_attention(&decoder_states, &encoder_output, projections, mask), &returns(), &known)
    };
    // First without a mask, so that a shape mistake is reported as one.
    let _ = attend(None)?;
    // Item 0 has its last source position padded (when there are at least two); the others are full.
    let padding = Tensor::ones([batch, s], (Kind::Int64, Device::Cpu));
    if s > 1 {
        let _ = padding.get(0).narrow(0, s - 1, 1).fill_(0);
    }
    let (output, weights) = attend(Some(&padding))?;
    if s > 1 {
        let leaked = weights.get(0).narrow(1, s - 1, 1).abs().max().double_value(&[]);
        if leaked != 0.0 {
            return Err(Failure::named(
                PADDING_IGNORED,
                format!(
                    "the padded source position gets weight {leaked:.4}; it must be exactly 0 (mask it with -inf \
                     before the softmax; the [batch, s] mask needs a middle axis to broadcast over the target \
                     positions)"
                ),
            ));
        }
    }
    expect_rows_sum_to_one("weights", &weights)?;
    // Independent reference: libtorch's own attention kernel on the same projections.
    let q = projections.query.forward(&decoder_states);
    let k = projections.key.forward(&encoder_output);
    let v = projections.value.forward(&encoder_output);
    let allowed = padding.ne(0).unsqueeze(1); // [batch, 1, s]
    let sdpa = |scale: Option<f64>| {
        Tensor::scaled_dot_product_attention(&q, &k, &v, Some(allowed.shallow_clone()), 0.0, false, scale, false)
    };
    expect_close_or_name(
        "output",
        &output,
        &sdpa(None),
        1e-5,
        &[
            (
                sdpa(Some(1.0 / head_dim as f64)),
                named(SCALED_BY_D, "the scores are divided by head_dim; divide by √head_dim"),
            ),
            (sdpa(Some(1.0)), told("the scores are not scaled: divide by √head_dim")),
        ],
    )?;
    Ok(())
}

/// `decoder_layer`: no peeking at later targets, a dependence on the encoder output, and the crate's
/// tested pre-LN decoder layer built from the same parts.
pub fn decoder_layer(
    decoder_layer: &dyn Fn(&Tensor, &Tensor, &DecoderLayerParts, &Tensor, Option<&Tensor>) -> Tensor,
) -> CheckResult {
    // The book's options: a pre-LN layer.
    let config = BertConfig { hidden_act: Activation::Relu, ..BertConfig::tiny(EncoderOptions::book()) }.layer();
    let vs = nn::VarStore::new(Device::Cpu);
    let layer = TransformerDecoderLayer::new(vs.root(), &config);
    let parts = DecoderLayerParts {
        self_attention: &layer.self_attention,
        cross_attention: &layer.cross_attention,
        feed_forward: &layer.feed_forward,
        norm_1: &layer.self_attention_residual.layer_norm,
        norm_2: &layer.cross_attention_residual.layer_norm,
        norm_3: &layer.feed_forward_residual.layer_norm,
    };
    let h = config.hidden_size;
    let target_ids = Tensor::from_slice(&[5i64, 6, 7, 8, 9, 9, 5, 6, 7, 0, 0, 0]).view([2, 6]);
    let source_ids = Tensor::from_slice(&[3i64, 4, 0, 0, 3, 4, 5, 6]).view([2, 4]);
    let (target_mask, source_mask) = (decoder_mask(&target_ids, 0), padding_mask(&source_ids, 0));
    let (x, memory) = (randn(&[2, 6, h]), randn(&[2, 4, h]));
    let run = |x: &Tensor, memory: &Tensor| {
        let returned =
            Returned::floats("decoder_layer output", &[2, 6, h]).told(": the same shape as the decoder states x");
        call(|| decoder_layer(x, memory, &parts, &target_mask, Some(&source_mask)), &[returned], &[])
    };
    let out = run(&x, &memory)?;
    let later_changed = Tensor::cat(&[x.narrow(1, 0, 3), randn(&[2, 3, h])], 1);
    let diff = max_abs_diff(&run(&later_changed, &memory)?.narrow(1, 0, 3), &out.narrow(1, 0, 3));
    if diff > 1e-5 {
        return Err(Failure::named(
            NO_TARGET_MASK,
            format!(
                "the outputs at positions 0..3 changed (by {diff:.3e}) when only later target tokens changed: the \
                 self-attention must get the target mask"
            ),
        ));
    }
    if max_abs_diff(&run(&x, &randn(&[2, 4, h]))?, &out) < 1e-6 {
        return Err(Failure::named(
            CROSS_ATTENTION_FORGOTTEN,
            "the output does not depend on the encoder output: cross-attention takes its keys and values from memory"
                .into(),
        ));
    }
    let expected = layer.forward(&x, &memory, Some(&target_mask), Some(&source_mask), false, None).hidden_state;
    decoder_arrangements(&out, &x, &memory, &parts, (&target_mask, &source_mask))?;
    expect_close(
        "decoder_layer output",
        &out,
        &expected,
        1e-5,
        ": check each step is x + sublayer(norm(x)) in the order self-attention (norm_1), cross-attention \
         (norm_2), feed-forward (norm_3)",
    )
}

/// Two classic arrangements of the same parts, named when the student's output is one of them: post-LN,
/// and no skip connections.
fn decoder_arrangements(
    out: &Tensor,
    x: &Tensor,
    memory: &Tensor,
    parts: &DecoderLayerParts,
    (target_mask, source_mask): (&Tensor, &Tensor),
) -> CheckResult {
    let self_attend = |h: &Tensor| parts.self_attention.forward(h, h, Some(target_mask), Pass::EVAL).output;
    let cross_attend = |h: &Tensor| parts.cross_attention.forward(h, memory, Some(source_mask), Pass::EVAL).output;
    let post_ln = {
        let y = parts.norm_1.forward(&(x + self_attend(x)));
        let y = parts.norm_2.forward(&(&y + cross_attend(&y)));
        parts.norm_3.forward(&(&y + parts.feed_forward.forward(&y)))
    };
    let no_skips = {
        let y = self_attend(&parts.norm_1.forward(x));
        let y = cross_attend(&parts.norm_2.forward(&y));
        parts.feed_forward.forward(&parts.norm_3.forward(&y))
    };
    if close(out, &post_ln, 1e-5) {
        return Err(Failure::named(
            POST_LAYER_NORM,
            "decoder_layer: this is the post-layer-norm arrangement, norm(x + sublayer(x)); this layer is pre-LN: \
             x + sublayer(norm(x))"
                .into(),
        ));
    }
    if close(out, &no_skips, 1e-5) {
        return Err(Failure::named(
            NO_SKIP_CONNECTIONS,
            "decoder_layer: the skip connections are missing: add x back after each sub-layer, x + sublayer(norm(x))"
                .into(),
        ));
    }
    Ok(())
}

/// The three classic wrong tables, built in `f64`, named when the student's table is one of them.
fn sinusoidal_mistake(pe: &Tensor, max_len: i64, d_model: i64) -> Option<Said> {
    let pos = Tensor::arange(max_len, (Kind::Double, Device::Cpu)).unsqueeze(1); // [max_len, 1]
    let i = Tensor::arange(d_model / 2, (Kind::Double, Device::Cpu)); // [d/2]
    let angle = |exponent: &Tensor| &pos / (exponent * (10000f64.ln() / d_model as f64)).exp(); // [max_len, d/2]
    let (right, wrong_power) = (angle(&(&i * 2.0)), angle(&i));
    let interleave = |even: &Tensor, odd: &Tensor| Tensor::stack(&[even, odd], -1).view([max_len, d_model]);
    let got = pe.to_kind(Kind::Double);
    let variants = [
        (
            Tensor::cat(&[right.sin(), right.cos()], 1),
            named(
                HALVES_NOT_INTERLEAVED,
                ": the columns are in two halves (all sines, then all cosines); interleave them",
            ),
        ),
        (
            interleave(&wrong_power.sin(), &wrong_power.cos()),
            named(I_INSTEAD_OF_2I, ": the exponent uses i where the formula has 2i (the pair index times 2)"),
        ),
        (interleave(&right.cos(), &right.sin()), named(SIN_COS_SWAPPED, ": the sines and cosines are swapped")),
    ];
    variants.iter().find(|(table, _)| close(&got, table, 1e-4)).map(|(_, said)| *said)
}

/// `sinusoidal_positions`: entries against the formula evaluated in `f64`.
pub fn sinusoidal_positions(sinusoidal_positions: &dyn Fn(i64, i64, Device) -> Tensor) -> CheckResult {
    let drawn = Tensor::randint_low(8, 40, [2], (Kind::Int64, Device::Cpu));
    let (len, half) = (drawn.int64_value(&[0]), drawn.int64_value(&[1]));
    for (max_len, d_model) in [(10, 4), (50, 16), (128, 64), (len, 2 * half)] {
        let returned = Returned::floats(format!("sinusoidal_positions({max_len}, {d_model}, ..)"), &[max_len, d_model]);
        let pe = call(|| sinusoidal_positions(max_len, d_model, Device::Cpu), &[returned], &[])?;
        for pos in [0, 1, 3, max_len / 2, max_len - 1] {
            for i in 0..d_model / 2 {
                let angle = pos as f64 / 10000f64.powf(2.0 * i as f64 / d_model as f64);
                for (column, want, formula) in [(2 * i, angle.sin(), "sin"), (2 * i + 1, angle.cos(), "cos")] {
                    let got = pe.double_value(&[pos, column]);
                    // NaN fails too: every comparison with it is false.
                    let off = (got - want).abs();
                    if off.is_nan() || off > 1e-4 {
                        let said = sinusoidal_mistake(&pe, max_len, d_model);
                        return Err(Failure {
                            message: format!(
                                "PE[{pos}][{column}] is {got:.5}, expected {formula}({pos} / 10000^({}/{d_model})) = \
                                 {want:.5} (even columns hold sines, odd columns cosines, interleaved){}",
                                2 * i,
                                said.map_or("", |s| s.words)
                            ),
                            mistake: said.and_then(|s| s.mistake),
                        });
                    }
                }
            }
        }
    }
    Ok(())
}
