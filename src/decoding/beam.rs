//! # Beam search with a length penalty
//!
//! Instead of one partial output, beam search keeps the `width` most probable ones (the *beams*). At each
//! step every beam is extended by every token, and the `width` best extensions survive; an extension that
//! writes the end token is set aside as a finished hypothesis. Summed log-probabilities favour short
//! outputs (every token lowers the sum), so finished hypotheses are compared by
//! `log p / lp(len)` with the length penalty `lp(len) = ((5 + len) / 6)^α` of GNMT (Wu et al. 2016, §7):
//! α = 0 compares raw log-probabilities, larger α favours longer outputs. Width 1 is greedy decoding.
//!
//! Whose α is whose: the 0.6 that the chapter and `anatomy translate` use with this penalty is the
//! Transformer paper's (Vaswani et al. 2017, §6.1: beam 4, α = 0.6). GNMT's reported setting is α = 0.2,
//! and its score has a second term that this search leaves out, a coverage penalty (weight β = 0.2) that
//! lowers the score of an output whose attention leaves source tokens barely read. The 0.6 to 0.7 that
//! GNMT mentions belongs to the plain `len^α` normalisation it used before it designed this penalty.
//!
//! The search stops when `width` outputs have ended and no beam still open has a higher summed
//! log-probability than the lowest of the `width` best ended ones: a sum can only fall as tokens are
//! added, so such a beam could not end above them (exactly so for α = 0; a length penalty could still
//! favour a long beam, which is the rule's price). Stopping as soon as `width` outputs have ended, as
//! fairseq does, can return a worse output than greedy decoding: poor beams that end early fill the quota
//! while the best beam is one token from its end.
//!
//! Chapter section: [`chapters/10-training.md`](../chapters/10-training.md).
use anyhow::{ensure, Result};
use tch::{Kind, Tensor};

use super::{check_request, forbid, StepDecoder};
use crate::encoder_decoder::EncoderDecoder;

/// How to search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BeamOptions {
    /// How many partial outputs are kept (1 = greedy).
    pub width: usize,
    /// α of the length penalty `((5 + len) / 6)^α` (GNMT's form; 0 = none). The Transformer paper uses
    /// 0.6 with it; GNMT itself reports 0.2, beside a coverage penalty that this search leaves out.
    pub length_penalty: f64,
    pub max_new_tokens: i64,
    /// Keep the decoder's keys and values between steps (same result, faster).
    pub use_cache: bool,
}

/// A finished (or, at the length limit, unfinished) output.
#[derive(Debug, Clone, PartialEq)]
pub struct Hypothesis {
    /// The tokens, without `<s>` and `</s>`.
    pub tokens: Vec<i64>,
    /// The sum of the tokens' log-probabilities, the end token's included when finished.
    pub log_prob: f64,
    /// `log_prob / lp(len)`, what hypotheses are ranked by; `len` counts the end token.
    pub score: f64,
    pub finished: bool,
}

impl Hypothesis {
    /// A hypothesis scored by `log_prob / lp(len)` with length-penalty exponent `alpha`; `len` counts the
    /// end token when `finished`. Greedy output ranked among beams gets its score here too.
    pub fn new(tokens: Vec<i64>, log_prob: f64, finished: bool, alpha: f64) -> Self {
        let len = tokens.len() + usize::from(finished);
        Hypothesis { tokens, log_prob, score: log_prob / length_penalty(len, alpha), finished }
    }
}

/// One beam alive after a step: which beam of the step before it extends, with which token, and its
/// summed log-probability. The steps together draw the search tree.
#[derive(Debug, Clone, PartialEq)]
pub struct BeamNode {
    pub parent: usize,
    pub token: i64,
    pub log_prob: f64,
}

/// The result: hypotheses best first, the beams after every step, and the end tokens written at every
/// step (`ends[s]`: each a [`BeamNode`] whose `token` is the end id and whose `parent` indexes
/// `steps[s - 1]`, or the start for `s = 0`), so that a picture can draw every finished output to its end.
#[derive(Debug, Clone)]
pub struct BeamSearch {
    pub hypotheses: Vec<Hypothesis>,
    pub steps: Vec<Vec<BeamNode>>,
    pub ends: Vec<Vec<BeamNode>>,
}

/// GNMT's length penalty `((5 + len) / 6)^α` (Wu et al. 2016, §7), without its coverage penalty.
pub fn length_penalty(len: usize, alpha: f64) -> f64 {
    ((5.0 + len as f64) / 6.0).powf(alpha)
}

/// Whether a beam still open has a higher summed log-probability than the lowest of the `width` best
/// ended outputs (by score): only then may searching on change those.
fn open_beam_can_win(finished: &[Hypothesis], open: &[BeamNode], width: usize) -> bool {
    let mut scores: Vec<&Hypothesis> = finished.iter().filter(|h| h.finished).collect();
    scores.sort_by(|a, b| b.score.total_cmp(&a.score));
    let lowest = scores.iter().take(width).map(|h| h.log_prob).fold(f64::INFINITY, f64::min);
    open.iter().any(|b| b.log_prob > lowest)
}

/// Searches for the best output for one source sentence `[1, s]`.
pub fn beam_search(
    model: &EncoderDecoder,
    source: &Tensor,
    start_id: i64,
    end_id: i64,
    options: BeamOptions,
) -> Result<BeamSearch> {
    ensure!(options.width > 0, "the beam width must be at least 1");
    ensure!(source.dim() == 2 && source.size()[0] == 1, "beam search takes one sentence, shape [1, s]");
    check_request(model, source, start_id, end_id, options.max_new_tokens)?;
    let _no_grad = tch::no_grad_guard();
    let width = options.width;
    let mut decoder = StepDecoder::new(model, source, start_id, options.use_cache);
    let mut beams: Vec<(Vec<i64>, f64)> = vec![(Vec::new(), 0.0)];
    let mut finished: Vec<Hypothesis> = Vec::new();
    let (mut steps, mut ends) = (Vec::new(), Vec::new());
    let finish = |tokens, log_prob, done| Hypothesis::new(tokens, log_prob, done, options.length_penalty);
    for _ in 0..options.max_new_tokens {
        let log_probs = forbid(&decoder.next_log_probs(), &[model.config.pad_id, start_id]); // [k, V]
        let vocab = log_probs.size()[1];
        let sums: Vec<f64> = beams.iter().map(|b| b.1).collect();
        let totals =
            log_probs.to_kind(Kind::Double) + Tensor::from_slice(&sums).to_device(log_probs.device()).unsqueeze(1);
        let flat = totals.view([-1]);
        let n = (2 * width as i64).min(flat.size()[0]);
        let (values, indices) = flat.topk(n, 0, true, true);
        let values = Vec::<f64>::try_from(&values).expect("scores on the CPU");
        let indices = Vec::<i64>::try_from(&indices).expect("indices on the CPU");
        let (mut next, mut ended): (Vec<BeamNode>, Vec<BeamNode>) = (Vec::new(), Vec::new());
        for (rank, (&total, &index)) in values.iter().zip(&indices).enumerate() {
            if total == f64::NEG_INFINITY {
                break;
            }
            let (parent, token) = ((index / vocab) as usize, index % vocab);
            if token == end_id {
                // An end token counts only among the best `width` candidates (as greedy would pick it).
                if rank < width {
                    finished.push(finish(beams[parent].0.clone(), total, true));
                    ended.push(BeamNode { parent, token, log_prob: total });
                }
            } else if next.len() < width {
                next.push(BeamNode { parent, token, log_prob: total });
            }
            if next.len() == width {
                break;
            }
        }
        ends.push(ended);
        if next.is_empty() || (finished.len() >= width && !open_beam_can_win(&finished, &next, width)) {
            steps.push(next);
            break;
        }
        let parents = Tensor::from_slice(&next.iter().map(|b| b.parent as i64).collect::<Vec<_>>());
        let tokens = Tensor::from_slice(&next.iter().map(|b| b.token).collect::<Vec<_>>());
        decoder.select(&parents.to_device(source.device()));
        decoder.push(&tokens.to_device(source.device()));
        beams = next.iter().map(|b| ([&beams[b.parent].0[..], &[b.token]].concat(), b.log_prob)).collect();
        steps.push(next);
        if steps.len() as i64 == options.max_new_tokens {
            finished.extend(beams.iter().map(|(tokens, lp)| finish(tokens.clone(), *lp, false)));
        }
    }
    finished.sort_by(|a, b| b.finished.cmp(&a.finished).then(b.score.total_cmp(&a.score)));
    Ok(BeamSearch { hypotheses: finished, steps, ends })
}
