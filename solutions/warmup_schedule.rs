//! Reference solution (see `exercises/warmup_schedule.rs` for the task).

pub fn learning_rate(step: u64, d_model: i64, warmup: u64) -> f64 {
    let (step, warmup) = (step as f64, warmup as f64);
    (d_model as f64).powf(-0.5) * step.powf(-0.5).min(step * warmup.powf(-1.5))
}
