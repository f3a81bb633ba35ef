//! A plausible wrong answer to `label_smoothed_loss`; the grader must fail it.
//! expect: spread over the V − 1 wrong tokens
use tch::{Kind, Tensor};

pub fn label_smoothed_loss(logits: &Tensor, targets: &Tensor, smoothing: f64, pad: i64) -> Tensor {
    let vocab = logits.size()[1];
    let log_p = logits.log_softmax(-1, Kind::Float);
    let n = targets.size()[0];
    let q = log_p.full_like(smoothing / (vocab - 1) as f64).scatter(
        1,
        &targets.unsqueeze(1),
        &Tensor::full([n, 1], 1.0 - smoothing, (Kind::Float, logits.device())),
    );
    let keep = targets.ne(pad).to_kind(Kind::Float);
    (-(q * log_p).sum_dim_intlist(1, false, Kind::Float) * &keep).sum(Kind::Float) / keep.sum(Kind::Float)
}
