//! Reference solution (see `exercises/beam_step.rs` for the task).
use tch::Tensor;

pub fn beam_step(scores: &Tensor, log_probs: &Tensor, width: i64) -> (Tensor, Tensor, Tensor) {
    let vocab = log_probs.size()[1];
    let candidates = scores.unsqueeze(1) + log_probs; // [beams, vocab]
    let (best, flat) = candidates.flatten(0, 1).topk(width, 0, true, true); // over all beams together
    let beam = flat.divide_scalar_mode(vocab, "floor");
    let token = flat.remainder(vocab);
    (best, beam, token)
}
