//! # Greedy decoding, for a whole batch at once
//!
//! At every step, every sequence appends its most probable next token; a sequence is done when it writes
//! the end token, and the batch is done when all are (or after `max_new_tokens`). Fast and often good,
//! but it can never take back a choice: a token that looked best early may lead to a worse sentence.
//!
//! Chapter section: [`chapters/10-training.md`](../chapters/10-training.md).
use tch::{Kind, Tensor};

use super::{forbid, StepDecoder};
use crate::encoder_decoder::EncoderDecoder;

/// One decoded sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The tokens written, without `<s>` and `</s>`.
    pub tokens: Vec<i64>,
    /// The sum of the chosen tokens' log-probabilities (the end token's included when it was written).
    pub log_prob: f64,
    /// Whether the end token was written before the length limit.
    pub finished: bool,
}

/// Decodes every row of `source` `[b, s]` greedily from `start_id` until `end_id`. With `use_cache` the
/// decoder keeps its keys and values ([`StepDecoder`]); the tokens are the same either way.
pub fn greedy(
    model: &EncoderDecoder,
    source: &Tensor,
    start_id: i64,
    end_id: i64,
    max_new_tokens: i64,
    use_cache: bool,
) -> Vec<Decoded> {
    let _no_grad = tch::no_grad_guard();
    let batch = source.size()[0] as usize;
    let mut decoder = StepDecoder::new(model, source, start_id, use_cache);
    let mut out = vec![Decoded { tokens: Vec::new(), log_prob: 0.0, finished: false }; batch];
    for _ in 0..max_new_tokens {
        let log_probs = forbid(&decoder.next_log_probs(), &[model.config.pad_id, start_id]); // [b, V]
        let (best, chosen) = log_probs.max_dim(-1, false); // [b] each
        let best = Vec::<f64>::try_from(&best.to_kind(Kind::Double)).expect("log-probabilities on the CPU");
        let chosen_ids = Vec::<i64>::try_from(&chosen).expect("token ids on the CPU");
        for (d, (&token, &lp)) in out.iter_mut().zip(chosen_ids.iter().zip(&best)) {
            if d.finished {
                continue;
            }
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
    out
}
