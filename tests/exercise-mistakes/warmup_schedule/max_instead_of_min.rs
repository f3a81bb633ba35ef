//! A plausible wrong answer to `warmup_schedule`; the grader must fail it.
//! expect: max where the formula has min
pub fn learning_rate(step: u64, d_model: i64, warmup: u64) -> f64 {
    let (s, w, d) = (step as f64, warmup as f64, d_model as f64);
    d.powf(-0.5) * s.powf(-0.5).max(s * w.powf(-1.5))
}
