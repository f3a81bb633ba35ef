//! The loss from its two terms: the right token's log-probability (gathered) and the mean over the
//! vocabulary, mixed by ε, averaged over the positions that are not padding.
use tch::{Kind, Tensor};

pub fn label_smoothed_loss(logits: &Tensor, targets: &Tensor, smoothing: f64, pad: i64) -> Tensor {
    let log_p = logits.log_softmax(-1, Kind::Float); // [n, V]
    let right = log_p.gather(1, &targets.unsqueeze(1), false).squeeze_dim(1); // [n]
    let uniform = log_p.mean_dim(1, false, Kind::Float); // [n]
    let per_position = -((1.0 - smoothing) * right + smoothing * uniform);
    let keep = targets.ne(pad);
    per_position.masked_select(&keep).mean(Kind::Float)
}
