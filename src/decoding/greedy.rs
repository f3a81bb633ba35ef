//! # Greedy decoding, for a whole batch at once
//!
//! At every step, every sequence appends its most probable next token; a sequence is done when it writes
//! the end token, and the batch is done when all are (or after `max_new_tokens`). Fast and often good,
//! but it can never take back a choice: a token that looked best early may lead to a worse sentence.
//! Each [`Decoded`] keeps its steps — what the decoder was given and what it chose — so the tour and
//! chapter 10 can show the decoder's input growing one token at a time.
//!
//! Chapter sections: [`chapters/08-decoder-and-masking.md`](../chapters/08-decoder-and-masking.md) and
//! [`chapters/10-training.md`](../chapters/10-training.md).
use anyhow::Result;
use tch::{Kind, Tensor};

use super::{check_request, forbid, StepDecoder};
use crate::encoder_decoder::EncoderDecoder;

/// One step of greedy decoding for one sequence: what the decoder was given and what it chose.
#[derive(Debug, Clone, PartialEq)]
pub struct GreedyStep {
    /// `<s>` and the tokens written before this step.
    pub decoder_input: Vec<i64>,
    pub next_token: i64,
    /// The chosen token's log-probability.
    pub log_prob: f64,
}

/// One decoded sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The tokens written, without `<s>` and `</s>`.
    pub tokens: Vec<i64>,
    /// The sum of the chosen tokens' log-probabilities (the end token's included when it was written).
    pub log_prob: f64,
    /// Whether the end token was written before the length limit.
    pub finished: bool,
    /// Every step, the last one choosing `</s>` when the sequence finished.
    pub steps: Vec<GreedyStep>,
}

/// Decodes every row of `source` `[b, s]` greedily from `start_id` until `end_id`, at most
/// `max_new_tokens` tokens each (the end token included). Padding and the start token are never
/// written. With `use_cache` the decoder keeps its keys and values ([`StepDecoder`]); the tokens are the
/// same either way. Ids outside the vocabularies and lengths past the positional table are errors.
pub fn greedy(
    model: &EncoderDecoder,
    source: &Tensor,
    start_id: i64,
    end_id: i64,
    max_new_tokens: i64,
    use_cache: bool,
) -> Result<Vec<Decoded>> {
    check_request(model, source, start_id, end_id, max_new_tokens)?;
    let _no_grad = tch::no_grad_guard();
    let batch = source.size()[0] as usize;
    let mut decoder = StepDecoder::new(model, source, start_id, use_cache);
    let mut out = vec![Decoded { tokens: Vec::new(), log_prob: 0.0, finished: false, steps: Vec::new() }; batch];
    for _ in 0..max_new_tokens {
        let log_probs = forbid(&decoder.next_log_probs(), &[model.config.pad_id, start_id]); // [b, V]
        let (best, chosen) = log_probs.max_dim(-1, false); // [b] each
        let best = Vec::<f64>::try_from(&best.to_kind(Kind::Double).to_device(tch::Device::Cpu))?;
        let chosen_ids = Vec::<i64>::try_from(&chosen.to_device(tch::Device::Cpu))?;
        for (d, (&token, &lp)) in out.iter_mut().zip(chosen_ids.iter().zip(&best)) {
            if d.finished {
                continue;
            }
            let decoder_input = [&[start_id][..], &d.tokens].concat();
            d.steps.push(GreedyStep { decoder_input, next_token: token, log_prob: lp });
            d.log_prob += lp;
            if token == end_id {
                d.finished = true;
            } else {
                d.tokens.push(token);
            }
        }
        if out.iter().all(|d| d.finished) {
            break;
        }
        decoder.push(&chosen);
    }
    Ok(out)
}
