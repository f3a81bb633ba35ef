//! The schedule as its two branches, chosen by comparing the step with the warm-up.
pub fn learning_rate(step: u64, d_model: i64, warmup: u64) -> f64 {
    let scale = 1.0 / (d_model as f64).sqrt();
    if step < warmup {
        scale * step as f64 / (warmup as f64).powf(1.5)
    } else {
        scale / (step as f64).sqrt()
    }
}
