//! A plausible wrong answer to `beam_step`; the grader must fail it.
//! expect: the beam is i / vocab and the token i % vocab
use tch::{Kind, Tensor};

pub fn beam_step(scores: &Tensor, log_probs: &Tensor, width: i64) -> (Tensor, Tensor, Tensor) {
    let vocab = log_probs.size()[1];
    let beams = log_probs.size()[0];
    let (best, flat) = (scores.unsqueeze(1) + log_probs).flatten(0, 1).topk(width, 0, true, true);
    let _ = vocab;
    (best, flat.remainder(beams), flat.divide_scalar_mode(beams, "floor"))
}
