//! A plausible wrong answer to `beam_step`; the grader must fail it.
//! expect: scores so far are not added
use tch::{Kind, Tensor};

pub fn beam_step(scores: &Tensor, log_probs: &Tensor, width: i64) -> (Tensor, Tensor, Tensor) {
    let vocab = log_probs.size()[1];
    let _ = scores;
    let (best, flat) = log_probs.flatten(0, 1).topk(width, 0, true, true);
    (best, flat.divide_scalar_mode(vocab, "floor"), flat.remainder(vocab))
}
