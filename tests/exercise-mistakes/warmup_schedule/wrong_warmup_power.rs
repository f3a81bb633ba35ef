//! A plausible wrong answer to `warmup_schedule`; the grader must fail it.
//! expect: not step · warmup^(−1/2)
pub fn learning_rate(step: u64, d_model: i64, warmup: u64) -> f64 {
    let (s, w, d) = (step as f64, warmup as f64, d_model as f64);
    d.powf(-0.5) * s.powf(-0.5).min(s * w.powf(-0.5))
}
