//! Checks of the encoder exercises (chapters 4–7): the feed-forward layer, layer normalization, the
//! embeddings and the classifier head.
use tch::nn::{self, Module};
use tch::{Device, Kind, Tensor};

use super::{broadcast_error, call, expect_close_or_name, named, randn, told, CheckResult, Failure, Returned};
use transformer_anatomy::init;

// The named mistakes of this module's checks, a constant each (`NO_EPS` for "no_eps") and a list per
// check, written from `crates/course/exercises.toml`, which declares them.
include!(concat!(env!("OUT_DIR"), "/mistakes_encoder.rs"));

/// `x · Wᵀ + b` of a linear map, in f64.
fn affine(x: &Tensor, linear: &nn::Linear) -> Tensor {
    let out = x.to_kind(Kind::Double).matmul(&linear.ws.to_kind(Kind::Double).tr());
    match &linear.bs {
        Some(b) => out + b.to_kind(Kind::Double),
        None => out,
    }
}

/// GELU's exact form, x · Φ(x), from the error function.
fn gelu_exact(x: &Tensor) -> Tensor {
    x * 0.5 * ((x / 2f64.sqrt()).erf() + 1.0)
}

/// `feed_forward(x, linear_1, linear_2)`: linear, GELU, linear.
pub fn feed_forward(f: &dyn Fn(&Tensor, &nn::Linear, &nn::Linear) -> Tensor) -> CheckResult {
    let (batch, seq, hidden, intermediate) = (2, 5, 16, 64);
    let vs = nn::VarStore::new(Device::Cpu);
    let (l1, l2) =
        (init::linear(vs.root() / "l1", hidden, intermediate), init::linear(vs.root() / "l2", intermediate, hidden));
    let x = randn(&[batch, seq, hidden]) * 2.0;
    let out = call(
        || f(&x, &l1, &l2),
        &[Returned::floats("output", &[batch, seq, hidden]).told(": the same shape as the input")],
        &[(
            "cannot be multiplied",
            named(
                LINEAR_2_TWICE,
                "a linear map got input of the wrong width: linear_1 maps hidden → intermediate and linear_2 \
                 intermediate → hidden, each applied once (a miscopied listing of the book's applies linear_2 twice)",
            ),
        )],
    )?;
    let h = affine(&x, &l1);
    let then = |a: Tensor| affine(&a, &l2).to_kind(Kind::Float);
    expect_close_or_name(
        "output",
        &out,
        &then(gelu_exact(&h)),
        1e-4,
        &[
            (then(h.relu()), named(RELU, "ReLU instead of GELU: BERT's feed-forward uses GELU (`.gelu(\"none\")`)")),
            (
                then(h.shallow_clone()),
                named(NO_ACTIVATION, "no activation between the two linear maps: apply GELU to linear_1's output"),
            ),
            (
                then(h.gelu("tanh")),
                told("GELU's tanh approximation; BERT and this chapter use the exact (erf) form: `.gelu(\"none\")`"),
            ),
        ],
    )
}

/// Layer normalization over the last axis, in f64, with the variance divided by `n - correction`.
fn normalize(
    x: &Tensor,
    weight: &Tensor,
    bias: &Tensor,
    eps: f64,
    axis: i64,
    correction: i64,
    eps_inside: bool,
) -> Tensor {
    let x = x.to_kind(Kind::Double);
    let mean = x.mean_dim(axis, true, Kind::Double);
    let var = x.var_correction(axis, correction, true);
    let std = if eps_inside { (var + eps).sqrt() } else { var.sqrt() + eps };
    ((x - mean) / std * weight.to_kind(Kind::Double) + bias.to_kind(Kind::Double)).to_kind(Kind::Float)
}

/// `layer_norm(x, weight, bias, eps)` over the last axis.
pub fn layer_norm(f: &dyn Fn(&Tensor, &Tensor, &Tensor, f64) -> Tensor) -> CheckResult {
    let (batch, seq, hidden) = (2, 6, 8);
    let x = randn(&[batch, seq, hidden]) * 3.0 + 1.0;
    let (weight, bias) = (randn(&[hidden]), randn(&[hidden]));
    // A large ε, so that where it goes shows.
    let eps = 0.1;
    let returned = Returned::floats("output", &[batch, seq, hidden]).told(": the same shape as the input");
    let out = call(|| f(&x, &weight, &bias, eps), &[returned], &[])?;
    let libtorch = x.layer_norm([hidden], Some(&weight), Some(&bias), eps, false);
    let variant = |axis, correction, eps_inside| normalize(&x, &weight, &bias, eps, axis, correction, eps_inside);
    expect_close_or_name(
        "output",
        &out,
        &libtorch,
        1e-5,
        &[
            (
                variant(-1, 1, true),
                named(
                    UNBIASED_VARIANCE,
                    "the variance is the unbiased one (divided by n − 1); layer norm divides by n: \
                     `var_correction(-1, 0, true)` or the mean of the squared deviations",
                ),
            ),
            (
                normalize(&x, &weight, &bias, 0.0, -1, 0, true),
                named(
                    NO_EPS,
                    "ε is left out: add it to the variance under the square root, √(variance + ε), so that a token \
                     whose entries are all equal is not divided by 0",
                ),
            ),
            (
                variant(-1, 0, false),
                named(EPS_OUTSIDE_THE_ROOT, "ε is added after the square root; it goes inside: √(variance + ε)"),
            ),
            (
                variant(-1, 1, false),
                named(
                    THE_NOTES_VERSION,
                    "this is the lecture notes' version (chapter 05): the unbiased σ (n − 1, PyTorch's `std`) with ε \
                     added after the root; layer norm divides the variance by n and puts ε inside: √(variance + ε)",
                ),
            ),
            (
                variant(1, 0, true),
                named(
                    OVER_THE_TOKENS,
                    "normalized over the tokens (axis 1); layer norm normalizes each token's vector (axis -1)",
                ),
            ),
            (
                normalize(&x, &weight.ones_like(), &bias.zeros_like(), eps, -1, 0, true),
                named(NO_SCALE_AND_SHIFT, "the scale (weight) and shift (bias) are not applied"),
            ),
        ],
    )
}

/// `embeddings(input_ids, token_embeddings, position_embeddings, layer_norm)`.
pub fn embeddings(f: &dyn Fn(&Tensor, &nn::Embedding, &nn::Embedding, &nn::LayerNorm) -> Tensor) -> CheckResult {
    let (vocab, max_positions, hidden) = (30, 12, 8);
    let vs = nn::VarStore::new(Device::Cpu);
    let tokens = init::embedding(vs.root() / "tokens", vocab, hidden);
    let positions = init::embedding(vs.root() / "positions", max_positions, hidden);
    let mut norm = nn::layer_norm(vs.root() / "norm", vec![hidden], Default::default());
    // A scale and shift other than 1 and 0, so that a second layer norm changes the result.
    tch::no_grad(|| {
        norm.ws.as_mut().expect("affine").copy_(&(randn(&[hidden]) + 1.5));
        norm.bs.as_mut().expect("affine").copy_(&randn(&[hidden]));
    });
    // Below max_positions too, so that "token ids used as positions" can be computed and named.
    let ids = Tensor::randint_low(1, max_positions, [2, 5], (Kind::Int64, Device::Cpu));
    let out = call(
        || f(&ids, &tokens, &positions, &norm),
        &[Returned::floats("output", &[2, 5, hidden]).told(": [batch, seq, hidden], one vector per token")],
        &[
            ("out of range", told("a position id is past the table: positions count 0, 1, …, seq_len − 1")),
            (
                "'indices' to have one of the following scalar types",
                told("the position ids must be integers: `Tensor::arange(seq_len, (Kind::Int64, device))`"),
            ),
        ],
    )?;
    let table = |e: &nn::Embedding, ids: &Tensor| e.ws.index_select(0, &ids.flatten(0, -1)).view([2, 5, hidden]);
    let position_ids = Tensor::arange(5, (Kind::Int64, Device::Cpu)).unsqueeze(0).expand([2, 5], true);
    let summed = table(&tokens, &ids) + table(&positions, &position_ids);
    let expected = norm.forward(&summed);
    expect_close_or_name(
        "output",
        &out,
        &expected,
        1e-5,
        &[
            (
                norm.forward(&(table(&tokens, &ids) + table(&positions, &(&position_ids + 1)))),
                named(POSITIONS_FROM_ONE, "the positions start at 1; they count from 0"),
            ),
            (
                norm.forward(&(table(&tokens, &ids) + table(&positions, &ids))),
                named(
                    TOKEN_IDS_AS_POSITIONS,
                    "the token ids are used as positions; the position ids are 0, 1, …, seq_len − 1",
                ),
            ),
            (
                norm.forward(&norm.forward(&summed)),
                named(LAYER_NORM_TWICE, "the layer norm is applied twice; once, after the sum"),
            ),
            (
                norm.forward(&table(&tokens, &ids)) + table(&positions, &position_ids),
                named(
                    NORM_BEFORE_POSITIONS,
                    "the layer norm is applied before the position embeddings are added; add the token and position \
                     embeddings first, then normalize their sum",
                ),
            ),
            (summed.shallow_clone(), named(NO_LAYER_NORM, "no layer norm: normalize the sum of the two embeddings")),
            (norm.forward(&table(&tokens, &ids)), told("the position embeddings are not added")),
        ],
    )
}

/// `classifier_head(hidden_states, classifier)`: logits from the first token.
pub fn classifier_head(f: &dyn Fn(&Tensor, &nn::Linear) -> Tensor) -> CheckResult {
    let (batch, seq, hidden, labels) = (3, 5, 8, 4);
    let vs = nn::VarStore::new(Device::Cpu);
    let classifier = init::linear(vs.root() / "classifier", hidden, labels);
    let states = randn(&[batch, seq, hidden]);
    let returned = Returned::floats("logits", &[batch, labels]).said(named(
        EVERY_TOKEN,
        ": one row of class scores per sequence — take the first token's state (`select(1, 0)`) before the linear \
         map",
    ));
    let out = call(|| f(&states, &classifier), &[returned], &[])?;
    let logits = |pooled: Tensor| affine(&pooled, &classifier).to_kind(Kind::Float);
    expect_close_or_name(
        "logits",
        &out,
        &logits(states.select(1, 0)),
        1e-5,
        &[
            (
                logits(states.mean_dim(1, false, Kind::Float)),
                named(MEAN_POOLING, "the tokens are averaged; the head reads the first ([CLS]) token only"),
            ),
            (
                logits(states.select(1, seq - 1)),
                named(LAST_TOKEN, "the last token is used; the head reads the first ([CLS]) token"),
            ),
            (
                logits(states.amax(1, false)),
                told("max-pooled over the tokens; the head reads the first ([CLS]) token only"),
            ),
        ],
    )
}

/// `mean_pooling`: the mean over the real tokens only, against sentence-transformers' formula computed in
/// `f64`; the classic slips (padding averaged in, the sequence length as the count, the wrong axis, 0/0
/// for a text with no real token) are named.
pub fn mean_pooling(f: &dyn Fn(&Tensor, &Tensor) -> Tensor) -> CheckResult {
    let (batch, seq, hidden) = (3, 6, 8);
    let states = randn(&[batch, seq, hidden]);
    let mask = Tensor::from_slice(&[1i64, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0]).view([batch, seq]);
    let returned = Returned::floats("pooled", &[batch, hidden]).choose(|got| {
        if got == [seq, hidden] || got == [batch, seq] {
            named(WRONG_AXIS, ": pooled over the wrong axis — the tokens are axis 1 of [batch, seq, hidden]")
        } else {
            told(": one vector per text — sum over the tokens, axis 1")
        }
    });
    let needles = broadcast_error(hidden, seq, 2);
    let unsqueeze = told(
        "the [batch, seq] mask does not line up with the [batch, seq, hidden] states: give it a last axis, \
         [batch, seq, 1] (`.unsqueeze(-1)`), so that it multiplies every hidden unit of a token",
    );
    let known = [(needles[0].as_str(), unsqueeze), (needles[1].as_str(), unsqueeze)];
    let out = call(|| f(&states, &mask), &[returned], &known)?;
    let (h, m) = (states.to_kind(Kind::Double), mask.to_kind(Kind::Double).unsqueeze(-1));
    let expected = (&h * &m).sum_dim_intlist(1, false, Kind::Double) / m.sum_dim_intlist(1, false, Kind::Double);
    let by_length = (&h * &m).sum_dim_intlist(1, false, Kind::Double) / seq as f64;
    expect_close_or_name(
        "pooled",
        &out.to_kind(Kind::Double),
        &expected,
        1e-5,
        &[
            (
                h.mean_dim(1, false, Kind::Double),
                named(
                    PADDING_AVERAGED,
                    "the padding is averaged in: multiply by the mask before summing, and count only the real tokens",
                ),
            ),
            (
                by_length,
                named(
                    SEQUENCE_LENGTH,
                    "divided by the sequence length; divide by the number of real tokens (the mask's sum per text)",
                ),
            ),
        ],
    )?;
    // A text whose every position is padding: 0, not 0/0.
    let empty = Tensor::zeros([1, seq], (Kind::Int64, Device::Cpu));
    let returned =
        Returned::floats("pooled, for a text with no real token", &[1, hidden]).told(": one vector for the one text");
    let out = call(|| f(&states.narrow(0, 0, 1), &empty), &[returned], &known)?;
    if out.isnan().any().int64_value(&[]) != 0 {
        return Err(Failure::named(
            NO_CLAMP,
            "pooled: a text with no real token gives NaN (0/0): clamp the count to at least 1e-9 \
             (`clamp_min(1e-9)`), so that its vector is 0"
                .into(),
        ));
    }
    let largest = out.abs().max().double_value(&[]);
    if largest > 1e-6 {
        return Err(format!("pooled: a text with no real token should give 0, got values up to {largest:.3e}").into());
    }
    Ok(())
}
