//! Check of the decoder-only exercise: one GPT block with its attention written out, against the crate's
//! `gpt::GptBlock` built from the same parts. The classic ways of putting it together wrongly are
//! computed here from the same parts, so that a result equal to one of them is named.
use tch::nn::{self, Module};
use tch::{Device, Kind, Tensor};

use super::{call, close, expect_close, named, randn, told, CheckResult, Failure, Returned, Said, BOOLEAN_MASK};

use transformer_anatomy::attention::Pass;
use transformer_anatomy::exercises::support::GptBlockParts;
use transformer_anatomy::gpt::{GptBlock, GptConfig};
use transformer_anatomy::inspect::max_abs_diff;
use transformer_anatomy::masks::causal_mask;

// The named mistakes of this module's checks, a constant each (`NO_EPS` for "no_eps") and a list per
// check, written from `crates/course/exercises.toml`, which declares them.
include!(concat!(env!("OUT_DIR"), "/mistakes_gpt.rs"));

/// Where the causal mask acts, in the wrong arrangements the check names.
#[derive(Clone, Copy, PartialEq)]
enum MaskAt {
    /// Scores of the future set to −∞ before the softmax: right.
    BeforeSoftmax,
    /// Scores of the future set to 0 (not −∞) before the softmax.
    ZeroBeforeSoftmax,
    /// Weights of the future set to 0 after the softmax.
    AfterSoftmax,
    Nowhere,
}

/// One arrangement of the block's parts: `(mask, post-LN, skip connections, scaled by √head_dim)`.
fn arrangement(x: &Tensor, p: &GptBlockParts, mask: MaskAt, post_ln: bool, skips: bool, scaled: bool) -> Tensor {
    let (batch, t, d_model) = x.size3().unwrap();
    let head_dim = d_model / p.heads;
    let attend = |h: &Tensor| {
        let split = |y: Tensor| y.view([batch, t, p.heads, head_dim]).transpose(1, 2);
        let (q, k, v) = (split(p.query.forward(h)), split(p.key.forward(h)), split(p.value.forward(h)));
        let scale = if scaled { (head_dim as f64).sqrt() } else { 1.0 };
        let scores = q.matmul(&k.transpose(-2, -1)) / scale;
        let future = Tensor::ones([t, t], (Kind::Bool, Device::Cpu)).triu(1);
        let weights = match mask {
            MaskAt::BeforeSoftmax => scores.masked_fill(&future, f64::NEG_INFINITY).softmax(-1, Kind::Float),
            MaskAt::ZeroBeforeSoftmax => scores.masked_fill(&future, 0.0).softmax(-1, Kind::Float),
            MaskAt::AfterSoftmax => scores.softmax(-1, Kind::Float).masked_fill(&future, 0.0),
            MaskAt::Nowhere => scores.softmax(-1, Kind::Float),
        };
        p.output.forward(&weights.matmul(&v).transpose(1, 2).contiguous().view([batch, t, d_model]))
    };
    let sublayer = |x: &Tensor, norm: &nn::LayerNorm, f: &dyn Fn(&Tensor) -> Tensor| match (post_ln, skips) {
        (false, true) => x + f(&norm.forward(x)),
        (true, true) => norm.forward(&(x + f(x))),
        (false, false) => f(&norm.forward(x)),
        (true, false) => norm.forward(&f(x)),
    };
    let x = sublayer(x, p.norm_1, &attend);
    sublayer(&x, p.norm_2, &|h| p.feed_forward.forward(h))
}

/// `gpt_block(x, parts)`: the crate's block on the same parts, then the named mistakes, then causality.
pub fn gpt_block(gpt_block: &dyn Fn(&Tensor, &GptBlockParts) -> Tensor) -> CheckResult {
    let config = GptConfig { vocab_size: 10, layers: 1, heads: 4, d_model: 32, context: 16, dropout: 0.0 };
    let vs = nn::VarStore::new(Device::Cpu);
    let block = GptBlock::new(vs.root(), &config.layer());
    // LayerNorms that are not the identity, so that a swapped or skipped norm shows. In the order of the
    // names: the judge must draw the same numbers as the student's side.
    tch::no_grad(|| {
        for (name, mut t) in transformer_anatomy::init::sorted_variables(&vs) {
            if name.contains("layer_norm") {
                t.copy_(&(t.rand_like() + 0.5));
            }
        }
    });
    let parts = GptBlockParts::of(&block);
    let (batch, t, d) = (2, 7, config.d_model);
    let x = randn(&[batch, t, d]);
    let run = |x: &Tensor| {
        call(
            || gpt_block(x, &parts),
            &[Returned::floats("gpt_block output", &[batch, t, d]).told(": the same shape as x, [batch, t, d_model]")],
            &[
                (
                    "view size is not compatible with input tensor's size and stride",
                    told(
                        "after `transpose` the heads are not laid out one after another in memory: call \
                         `.contiguous()` before `view` (or use `reshape`)",
                    ),
                ),
                BOOLEAN_MASK,
            ],
        )
    };
    let out = run(&x)?;
    let expected = block.forward(&x, Some(&causal_mask(t, Device::Cpu)), Pass::EVAL, None).hidden_state;
    if close(&out, &expected, 1e-5) {
        return Ok(());
    }
    let wrong = wrong_arrangements(&x, &parts);
    if let Some((_, said)) = wrong.iter().find(|(arranged, _)| close(&out, arranged, 1e-5)) {
        return Err(Failure { message: format!("gpt_block: {}", said.words), mistake: said.mistake });
    }
    // Changing only the last three positions must leave the first four unchanged.
    let later_changed = Tensor::cat(&[x.narrow(1, 0, 4), randn(&[batch, 3, d])], 1);
    let diff = max_abs_diff(&run(&later_changed)?.narrow(1, 0, 4), &out.narrow(1, 0, 4));
    if diff > 1e-5 || diff.is_nan() {
        return Err(Failure::named(
            PAST_MASKED,
            format!(
                "gpt_block: the outputs at positions 0..4 changed (by {diff:.3e}) when only later positions changed: \
                 position i may read only positions ≤ i; hide the scores above the diagonal before the softmax"
            ),
        ));
    }
    expect_close(
        "gpt_block output",
        &out,
        &expected,
        1e-5,
        ": check the heads (view [batch, t, heads, head_dim], then transpose(1, 2)), the order of the two \
         sub-layers (attention with norm_1, then feed-forward with norm_2) and the output projection",
    )
}

/// The block's parts put together in the six wrong ways the check names, each with what it tells.
fn wrong_arrangements(x: &Tensor, parts: &GptBlockParts) -> [(Tensor, Said); 6] {
    [
        (
            arrangement(x, parts, MaskAt::Nowhere, false, true, true),
            named(
                NO_MASK,
                "there is no causal mask: every position reads the positions after it. Set the scores above the \
                 diagonal (`triu(1)`) to −∞ before the softmax",
            ),
        ),
        (
            arrangement(x, parts, MaskAt::AfterSoftmax, false, true, true),
            named(
                MASK_AFTER_SOFTMAX,
                "the mask comes after the softmax: the remaining weights of a row no longer sum to 1, and the \
                 future still counts through the softmax's denominator. Set the future's scores to −∞ before the \
                 softmax",
            ),
        ),
        (
            arrangement(x, parts, MaskAt::ZeroBeforeSoftmax, false, true, true),
            named(
                FUTURE_FILLED_WITH_ZERO,
                "the future's scores are set to 0, not −∞: exp(0) = 1, so the future keeps a share of the weight. \
                 Fill them with `f64::NEG_INFINITY`",
            ),
        ),
        (
            arrangement(x, parts, MaskAt::BeforeSoftmax, true, true, true),
            named(
                POST_LAYER_NORM,
                "this is the post-layer-norm arrangement, norm(x + sublayer(x)); a GPT block is pre-LN: \
                 x + sublayer(norm(x))",
            ),
        ),
        (
            arrangement(x, parts, MaskAt::BeforeSoftmax, false, false, true),
            named(
                NO_RESIDUAL,
                "the skip connections are missing: add x back after each sub-layer, x + sublayer(norm(x))",
            ),
        ),
        (
            arrangement(x, parts, MaskAt::BeforeSoftmax, false, true, false),
            named(NOT_SCALED, "the scores are not scaled: divide q · kᵀ by √head_dim before the softmax"),
        ),
    ]
}
