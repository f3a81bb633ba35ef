//! One beam step by sorting every candidate's score (not `topk`), and the flat index split with integer
//! division and remainder written as arithmetic.
use tch::{Kind, Tensor};

pub fn beam_step(scores: &Tensor, log_probs: &Tensor, width: i64) -> (Tensor, Tensor, Tensor) {
    let vocab = log_probs.size()[1];
    let flat = (scores.unsqueeze(1) + log_probs).reshape([-1]); // [beams · vocab]
    let (sorted, order) = flat.sort(0, true);
    let kept = order.narrow(0, 0, width);
    let beams = kept.divide_scalar_mode(vocab, "floor").to_kind(Kind::Int64);
    let tokens = &kept - &beams * vocab;
    (sorted.narrow(0, 0, width), beams, tokens)
}
