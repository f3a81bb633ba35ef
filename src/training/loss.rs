//! # The loss: cross-entropy against the target, with label smoothing
//!
//! At every target position the model gives a distribution over the vocabulary; the loss is how far it
//! is from the distribution we want. With a one-hot target (all mass on the right token) that is the
//! cross-entropy `-log p(right token)`. Label smoothing, as in the 2017 paper (ε = 0.1), moves a little
//! of the target's mass away from the right token, so the model is not pushed towards infinite
//! confidence: it scores worse on perplexity but better on accuracy and BLEU.
//!
//! **Convention.** We spread ε uniformly over *all* `V` classes, as PyTorch's
//! `cross_entropy(label_smoothing=ε)` does: the target is `(1 − ε)·onehot + ε/V`. (The annotated
//! Transformer instead gives the right token `1 − ε`, the padding class 0 and spreads ε over the other
//! `V − 2`.) Padding positions are left out of the average. The KL divergence to the smoothed target is
//! the cross-entropy minus the target's own entropy, a constant: the two have the same gradient, and
//! [`LossOutput`] reports both. `scripts/loss_reference.py` computes both with PyTorch for the tests.
//!
//! Chapter section: [`chapters/10-training.md`](../chapters/10-training.md).
use tch::{Kind, Tensor};

/// The loss of one batch.
#[derive(Debug)]
pub struct LossOutput {
    /// Mean label-smoothed cross-entropy over the non-padding positions (a scalar with a gradient): what
    /// training minimizes, and what PyTorch's `cross_entropy(…, label_smoothing=ε, ignore_index=pad)` gives.
    pub cross_entropy: Tensor,
    /// Mean KL divergence from the smoothed target to the prediction (`cross_entropy` minus the target's
    /// entropy); 0 for a perfect prediction.
    pub kl_divergence: Tensor,
    /// How many positions were averaged.
    pub tokens: i64,
}

/// The entropy of the smoothed target `(1 − ε)·onehot + ε/V`, the same at every position.
pub fn smoothed_target_entropy(vocab_size: i64, epsilon: f64) -> f64 {
    let v = vocab_size as f64;
    let (on, off) = (1.0 - epsilon + epsilon / v, epsilon / v);
    let term = |p: f64| if p > 0.0 { -p * p.ln() } else { 0.0 };
    term(on) + (v - 1.0) * term(off)
}

/// The smoothed target distribution itself, `[n, V]` for targets `[n]`: `1 − ε + ε/V` on the right
/// token and `ε/V` on every other (for pictures and for checking the loss by hand).
pub fn smoothed_targets(targets: &Tensor, vocab_size: i64, epsilon: f64) -> Tensor {
    let onehot = targets.onehot(vocab_size).to_kind(Kind::Double); // [n, V]
    onehot * (1.0 - epsilon) + epsilon / vocab_size as f64
}

/// The label-smoothed loss of log-probabilities `[b, t, V]` against target ids `[b, t]`, ignoring the
/// positions whose target is `pad_id`. `epsilon = 0` is the plain cross-entropy. (The arguments come in
/// the exercise's order: smoothing, then padding.)
///
/// ```
/// use tch::{Kind, Tensor};
/// use transformer_anatomy::training::loss::label_smoothed_loss;
///
/// // One position, three classes, the model is sure of class 2, and class 2 is right.
/// let log_probs = Tensor::from_slice(&[0.0001f32, 0.0001, 0.9998]).log().view([1, 1, 3]);
/// let loss = label_smoothed_loss(&log_probs, &Tensor::from_slice(&[2i64]).view([1, 1]), 0.0, 0);
/// assert!(loss.cross_entropy.double_value(&[]) < 1e-3);
/// ```
pub fn label_smoothed_loss(log_probs: &Tensor, targets: &Tensor, epsilon: f64, pad_id: i64) -> LossOutput {
    let vocab_size = *log_probs.size().last().expect("log-probabilities need a vocabulary axis");
    let log_probs = log_probs.reshape([-1, vocab_size]); // [n, V]
    let targets = targets.reshape([-1]); // [n]
    let kind = log_probs.kind();
    let keep = targets.ne(pad_id).to_kind(kind); // [n]: 1 for real tokens
    let tokens = keep.sum(Kind::Int64).int64_value(&[]);
    let nll = -log_probs.gather(1, &targets.unsqueeze(1), false).squeeze_dim(1); // [n]: -log p(right token)
    let spread = -log_probs.mean_dim(-1, false, kind); // [n]: mean over classes of -log p
    let per_position = nll * (1.0 - epsilon) + spread * epsilon;
    let cross_entropy = (per_position * &keep).sum(kind) / (tokens.max(1) as f64);
    let kl_divergence = &cross_entropy - smoothed_target_entropy(vocab_size, epsilon);
    LossOutput { cross_entropy, kl_divergence, tokens }
}
