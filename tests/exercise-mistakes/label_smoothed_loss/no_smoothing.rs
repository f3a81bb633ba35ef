//! A plausible wrong answer to `label_smoothed_loss`; the grader must fail it.
//! expect: ε is ignored
use tch::{Kind, Tensor};

pub fn label_smoothed_loss(logits: &Tensor, targets: &Tensor, smoothing: f64, pad: i64) -> Tensor {
    let vocab = logits.size()[1];
    let log_p = logits.log_softmax(-1, Kind::Float);
    let _ = (vocab, smoothing);
    let nll = -log_p.gather(1, &targets.unsqueeze(1), false).squeeze_dim(1);
    let keep = targets.ne(pad).to_kind(Kind::Float);
    (nll * &keep).sum(Kind::Float) / keep.sum(Kind::Float)
}
