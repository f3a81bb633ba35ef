//! # The learning-rate schedule with warm-up
//!
//! The 2017 paper trains with Adam (β₁ = 0.9, β₂ = 0.98, ε = 10⁻⁹) and a learning rate that first grows
//! linearly for `warmup` steps, then decays with the inverse square root of the step:
//! `lr = factor · d_model^(−1/2) · min(step^(−1/2), step · warmup^(−3/2))`. The warm-up matters: early on,
//! Adam's estimates of the gradients' scale are poor and a post-LN Transformer can diverge at full speed.
//! The peak, at `step = warmup`, is `factor / √(d_model · warmup)`.
//!
//! Chapter section: [`chapters/10-training.md`](../chapters/10-training.md).

/// The paper's rate at `step` (counted from 1; step 0 is treated as 1).
///
/// ```
/// use transformer_anatomy::training::schedule::learning_rate;
///
/// let peak = learning_rate(400, 512, 400, 1.0);
/// assert!((peak - 1.0 / (512.0f64 * 400.0).sqrt()).abs() < 1e-12);
/// assert!(learning_rate(100, 512, 400, 1.0) < peak && learning_rate(1600, 512, 400, 1.0) < peak);
/// ```
pub fn learning_rate(step: u64, d_model: i64, warmup: u64, factor: f64) -> f64 {
    let step = step.max(1) as f64;
    let warmup = warmup.max(1) as f64;
    factor * (d_model as f64).powf(-0.5) * step.powf(-0.5).min(step * warmup.powf(-1.5))
}
