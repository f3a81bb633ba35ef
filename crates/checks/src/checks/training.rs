//! Checks of the training and decoding exercises (chapter 10): teacher forcing, the label-smoothed loss,
//! the warm-up schedule, one beam-search step and one cached attention step.
use tch::{Device, Kind, Reduction, Tensor};

use super::{
    call, expect_close, expect_close_or_name, named, randn, told, CheckResult, Failure, Mistake, Returned, INTEGERS,
};

// The named mistakes of this module's checks, a constant each (`NO_EPS` for "no_eps") and a list per
// check, written from `crates/course/exercises.toml`, which declares them.
include!(concat!(env!("OUT_DIR"), "/mistakes_training.rs"));

/// `n` whole numbers in `low..high` from the grader's seeded generator.
fn draw(low: i64, high: i64, n: i64) -> Vec<i64> {
    Vec::<i64>::try_from(Tensor::randint_low(low, high, [n], (Kind::Int64, Device::Cpu))).expect("int64")
}

fn ids(rows: &[&[i64]]) -> Tensor {
    let width = rows[0].len() as i64;
    Tensor::from_slice(&rows.concat()).view([rows.len() as i64, width])
}

/// `shift_right(targets, bos, pad)`: the decoder's input under teacher forcing.
pub fn shift_right(f: &dyn Fn(&Tensor, i64, i64) -> Tensor) -> CheckResult {
    let (bos, pad, eos) = (1, 0, 2);
    let t = draw(3, 30, 6);
    let targets = ids(&[&[t[0], t[1], t[2], t[3], eos], &[t[4], t[5], eos, pad, pad]]);
    let returned = Returned::new("input", &targets.size(), INTEGERS).told(": one input token per target token");
    let got = call(|| f(&targets, bos, pad), &[returned], &[])?;
    // input[i] = bos at 0, else target[i − 1]; padding where the target is padding.
    let rule = |start: i64, shift: bool, keep_padding: bool| {
        let rows: Vec<Vec<i64>> = (0..2)
            .map(|b| {
                (0..5)
                    .map(|i| {
                        let target = targets.int64_value(&[b, i]);
                        if keep_padding && target == pad {
                            pad
                        } else if !shift {
                            target
                        } else if i == 0 {
                            start
                        } else {
                            targets.int64_value(&[b, i - 1])
                        }
                    })
                    .collect()
            })
            .collect();
        ids(&[&rows[0], &rows[1]])
    };
    expect_close_or_name(
        "input",
        &got.to_kind(Kind::Float),
        &rule(bos, true, true).to_kind(Kind::Float),
        0.0,
        &[
            (
                rule(pad, true, true).to_kind(Kind::Float),
                named(
                    PAD_AS_START_TOKEN,
                    "the pad id is used as the start token: the input starts with <bos>, and padding is masked out \
                     of attention, so the first prediction would see nothing",
                ),
            ),
            (
                rule(bos, false, true).to_kind(Kind::Float),
                named(
                    NOT_SHIFTED,
                    "the input is not shifted: at position i the decoder would read the very token it must predict",
                ),
            ),
            (
                rule(bos, true, false).to_kind(Kind::Float),
                named(
                    EOS_INTO_PADDING,
                    "an <eos> moved into a padded position: where the target is padding, the input is padding too",
                ),
            ),
        ],
    )
}

/// `label_smoothed_loss(logits, targets, smoothing, pad)`.
pub fn label_smoothed_loss(f: &dyn Fn(&Tensor, &Tensor, f64, i64) -> Tensor) -> CheckResult {
    let (n, vocab, pad, eps) = (8, 11, 0, 0.1);
    let noise = randn(&[n, vocab]) * 2.0;
    let t = draw(1, vocab, 6);
    let targets = Tensor::from_slice(&[t[0], t[1], pad, t[2], t[3], pad, t[4], t[5]]);
    // The right token's score stands 5 above the rest, as a model that has learned something scores it. The
    // other smoothing convention differs from ours by (ε / V) times the mean of log p(right) − the mean log
    // p(other); on pure noise that mean could fall within the tolerance (seed -542645195785841092 let that
    // wrong answer pass), and 5 puts it about six spreads away.
    let logits = noise + targets.one_hot(vocab).to_kind(Kind::Float) * 5.0;
    let returned = Returned::floats("loss", &[]).told(": a single number (the mean over the non-padding positions)");
    let got = call(|| f(&logits, &targets, eps, pad), &[returned], &[])?;
    let libtorch = |ignore, smoothing, reduction| {
        logits.cross_entropy_loss::<Tensor>(&targets, None, reduction, ignore, smoothing)
    };
    // The other convention: 1 − ε on the right token, ε / (V − 1) on each of the others.
    let others = {
        let log_p = logits.log_softmax(-1, Kind::Double);
        let q = Tensor::full([n, vocab], eps / (vocab - 1) as f64, (Kind::Double, Device::Cpu)).scatter_value(
            1,
            &targets.unsqueeze(1),
            1.0 - eps,
        );
        let per_token = -(q * log_p).sum_dim_intlist(1, false, Kind::Double);
        let keep = targets.ne(pad).to_kind(Kind::Double);
        ((per_token * &keep).sum(Kind::Double) / keep.sum(Kind::Double)).to_kind(Kind::Float)
    };
    expect_close_or_name(
        "loss",
        &got,
        &libtorch(pad, eps, Reduction::Mean),
        1e-5,
        &[
            (
                libtorch(-100, eps, Reduction::Mean),
                named(
                    PADDING_COUNTED,
                    "the padding positions are counted: leave out (and do not divide by) the targets equal to pad",
                ),
            ),
            (
                libtorch(pad, 0.0, Reduction::Mean),
                named(NO_SMOOTHING, "ε is ignored: this is the plain cross-entropy against the one-hot target"),
            ),
            (
                others,
                named(
                    SMOOTHING_OVER_THE_OTHERS,
                    "ε is spread over the V − 1 wrong tokens; this course follows PyTorch: ε / V to every token, the \
                     right one included, and 1 − ε more to the right one",
                ),
            ),
            (libtorch(pad, eps, Reduction::Sum), told("the loss is summed; average it over the non-padding positions")),
        ],
    )
}

/// `learning_rate(step, d_model, warmup)` with factor 1, steps counted from 1.
pub fn warmup_schedule(f: &dyn Fn(u64, i64, u64) -> f64) -> CheckResult {
    let drawn = draw(1, 1000, 3);
    let (d_model, warmup) = (64 * (1 + drawn[0] % 16), 100 + 10 * drawn[1] as u64);
    let steps = [1u64, 10, warmup / 2, warmup - 1, warmup, warmup + 1, 3 * warmup + drawn[2] as u64, 50 * warmup];
    let got = steps
        .iter()
        .map(|&s| call(|| f(s, d_model, warmup), &[Returned::number(format!("learning_rate({s}, ..)"))], &[]))
        .collect::<Result<Vec<f64>, Failure>>()?;
    let curve = |g: &dyn Fn(f64) -> f64| steps.iter().map(|&s| g(s as f64)).collect::<Vec<f64>>();
    let (d, w) = (d_model as f64, warmup as f64);
    let expected = curve(&|s| d.powf(-0.5) * s.powf(-0.5).min(s * w.powf(-1.5)));
    let same = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-9 * y.abs().max(1e-12));
    if same(&got, &expected) {
        return Ok(());
    }
    let mistakes: [(Vec<f64>, Mistake, &str); 3] = [
        (
            curve(&|s| d.powf(-0.5) * s.powf(-0.5).max(s * w.powf(-1.5))),
            MAX_INSTEAD_OF_MIN,
            "max where the formula has min: the rate must rise during the warm-up, then fall",
        ),
        (curve(&|s| s.powf(-0.5).min(s * w.powf(-1.5))), NO_MODEL_FACTOR, "the factor d_model^(−1/2) is missing"),
        (
            curve(&|s| d.powf(-0.5) * s.powf(-0.5).min(s * w.powf(-0.5))),
            WRONG_WARMUP_POWER,
            "the warm-up branch is step · warmup^(−3/2), not step · warmup^(−1/2)",
        ),
    ];
    if let Some((_, mistake, words)) = mistakes.iter().find(|(m, _, _)| same(&got, m)) {
        return Err(Failure::named(*mistake, format!("learning_rate: {words}")));
    }
    let (i, _) = got
        .iter()
        .zip(&expected)
        .enumerate()
        .find(|(_, (g, e))| (*g - *e).is_nan() || (*g - *e).abs() > 1e-9 * e.abs()) // NaN is a mismatch too
        .unwrap_or((0, (&got[0], &expected[0])));
    Err(format!(
        "learning_rate({}, {d_model}, {warmup}) is {:.6e}, expected d_model^(−1/2) · min(step^(−1/2), step · warmup^(−3/2)) = {:.6e}",
        steps[i], got[i], expected[i]
    )
    .into())
}

/// `beam_step(scores, log_probs, width) -> (scores, beams, tokens)`.
pub fn beam_step(f: &dyn Fn(&Tensor, &Tensor, i64) -> (Tensor, Tensor, Tensor)) -> CheckResult {
    let (beams, vocab, width) = (3, 7, 3);
    // Drawn, but shaped so that both classic mistakes give another answer than the right one: beam 0 (the
    // best so far) has two strong tokens, so the best candidates are not one per beam; beam 2 (far behind)
    // has one token so sure that ranking by the token's log-probability alone would put it first.
    let scores = Tensor::from_slice(&[-0.5f32, -1.0, -4.0]) - Tensor::rand([beams], (Kind::Float, Device::Cpu)) * 0.2;
    let picks = draw(0, vocab, 3);
    let logits = randn(&[beams, vocab]);
    let _ = logits.get(0).get(picks[0]).fill_(6.0);
    let _ = logits.get(0).get((picks[0] + 1 + picks[1] % (vocab - 1)) % vocab).fill_(5.0);
    let _ = logits.get(2).get(picks[2]).fill_(12.0);
    let log_probs = logits.log_softmax(-1, Kind::Float);
    let returns = [
        Returned::floats("scores", &[width]).told(": one score per kept candidate"),
        Returned::new("beams", &[width], INTEGERS).told(": the beam each kept candidate extends"),
        Returned::new("tokens", &[width], INTEGERS).told(": the token each kept candidate adds"),
    ];
    let (new_scores, from, tokens) = call(|| f(&scores, &log_probs, width), &returns, &[])?;
    // Every (beam, token) candidate, scored and sorted best first.
    let mut all: Vec<(f64, i64, i64)> = Vec::new();
    for b in 0..beams {
        for t in 0..vocab {
            all.push((scores.double_value(&[b]) + log_probs.double_value(&[b, t]), b, t));
        }
    }
    all.sort_by(|x, y| y.0.total_cmp(&x.0));
    let kept = &all[..width as usize];
    let got: Vec<(f64, i64, i64)> =
        (0..width).map(|i| (new_scores.double_value(&[i]), from.int64_value(&[i]), tokens.int64_value(&[i]))).collect();
    let matches = |want: &[(f64, i64, i64)]| {
        got.iter().zip(want).all(|(g, w)| (g.0 - w.0).abs() < 1e-5 && g.1 == w.1 && g.2 == w.2)
    };
    if matches(kept) {
        return Ok(());
    }
    // Known mistakes: ranking by the new token's log-probability alone, or keeping each beam's best token.
    let mut alone: Vec<(f64, i64, i64)> =
        all.iter().map(|&(_, b, t)| (log_probs.double_value(&[b, t]), b, t)).collect();
    alone.sort_by(|x, y| y.0.total_cmp(&x.0));
    if got.iter().zip(&alone).all(|(g, w)| g.1 == w.1 && g.2 == w.2) {
        return Err(Failure::named(
            SCORES_NOT_ADDED,
            "the beams' scores so far are not added: a candidate's score is its beam's score plus the token's \
             log-probability"
                .into(),
        ));
    }
    let best_of_each: Vec<(i64, i64)> =
        (0..beams).map(|b| (b, log_probs.get(b).argmax(0, false).int64_value(&[]))).collect();
    let got_pairs: Vec<(i64, i64)> = got.iter().map(|g| (g.1, g.2)).collect();
    if best_of_each.iter().all(|p| got_pairs.contains(p)) {
        return Err(Failure::named(
            BEST_TOKEN_OF_EACH_BEAM,
            "each beam's best token was kept; beam search ranks all beams × vocabulary candidates together, so \
             a strong beam may keep several"
                .into(),
        ));
    }
    if got.iter().zip(kept).all(|(g, w)| (g.0 - w.0).abs() < 1e-5) {
        return Err(Failure::named(
            INDEX_SPLIT_WRONGLY,
            format!(
                "the scores are right but the beams or tokens are not: for a flat index i over [beams, vocab], the \
                 beam is i / vocab and the token i % vocab (expected beams {:?}, tokens {:?})",
                kept.iter().map(|k| k.1).collect::<Vec<_>>(),
                kept.iter().map(|k| k.2).collect::<Vec<_>>()
            ),
        ));
    }
    Err(format!(
        "expected the {width} best (score, beam, token) over all candidates, best first: {:?}; got {:?}",
        kept.iter().map(|k| (format!("{:.4}", k.0), k.1, k.2)).collect::<Vec<_>>(),
        got.iter().map(|k| (format!("{:.4}", k.0), k.1, k.2)).collect::<Vec<_>>()
    )
    .into())
}

/// `cached_attention(past_keys, past_values, query, key, value) -> (output, keys, values)`.
pub fn cached_attention(
    f: &dyn Fn(&Tensor, &Tensor, &Tensor, &Tensor, &Tensor) -> (Tensor, Tensor, Tensor),
) -> CheckResult {
    let (batch, heads, past, d) = (2, 3, 4, 8);
    let (pk, pv) = (randn(&[batch, heads, past, d]), randn(&[batch, heads, past, d]));
    let (q, k, v) = (randn(&[batch, heads, 1, d]) * 2.0, randn(&[batch, heads, 1, d]), randn(&[batch, heads, 1, d]));
    let grown = [batch, heads, past + 1, d];
    let advice =
        named(APPENDED_ON_THE_WRONG_AXIS, ": the cache grows by one position — append along the positions axis (2)");
    let returns = [
        Returned::floats("output", &[batch, heads, 1, d]).told(": one vector per head for the one new position"),
        Returned::floats("keys", &grown).said(advice),
        Returned::floats("values", &grown).said(advice),
    ];
    let (output, keys, values) = call(
        || f(&pk, &pv, &q, &k, &v),
        &returns,
        &[(
            "must match except in dimension",
            named(
                APPENDED_ON_THE_WRONG_AXIS,
                "the cache grows along the positions axis: append along the positions axis (2)",
            ),
        )],
    )?;
    let (all_k, all_v) = (Tensor::cat(&[&pk, &k], 2), Tensor::cat(&[&pv, &v], 2));
    expect_close("keys", &keys, &all_k, 0.0, ": the old keys, then the new one, in order")?;
    expect_close("values", &values, &all_v, 0.0, ": the old values, then the new one, in order")?;
    let sdpa = |k: &Tensor, v: &Tensor, scale: Option<f64>| {
        Tensor::scaled_dot_product_attention(&q, k, v, None::<Tensor>, 0.0, false, scale, false)
    };
    // A causal mask built for a square [t, t] and applied to the one row: only the first position is left.
    let first_only = pv.narrow(2, 0, 1);
    expect_close_or_name(
        "output",
        &output,
        &sdpa(&all_k, &all_v, None),
        1e-5,
        &[
            (
                sdpa(&pk, &pv, None),
                named(
                    NEW_POSITION_NOT_ATTENDED,
                    "the new position does not attend to itself: append its key and value, then attend",
                ),
            ),
            (
                first_only,
                named(
                    CAUSAL_MASK_APPLIED,
                    "a causal mask is applied: the one query is the newest position, every cached position is in \
                     its past, so no mask is needed",
                ),
            ),
            (sdpa(&all_k, &all_v, Some(1.0)), told("the scores are not scaled: divide by √head_dim")),
        ],
    )
}
