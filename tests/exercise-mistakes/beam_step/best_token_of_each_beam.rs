//! A plausible wrong answer to `beam_step`; the grader must fail it.
//! expect: each beam's best token was kept
use tch::{Kind, Tensor};

pub fn beam_step(scores: &Tensor, log_probs: &Tensor, width: i64) -> (Tensor, Tensor, Tensor) {
    let vocab = log_probs.size()[1];
    let _ = width;
    let (best, token) = log_probs.max_dim(1, false);
    let beam = Tensor::arange(log_probs.size()[0], (Kind::Int64, log_probs.device()));
    (scores + best, beam, token)
}
