//! A plausible wrong answer to `warmup_schedule`; the grader must fail it.
//! expect: d_model^(−1/2) is missing
pub fn learning_rate(step: u64, d_model: i64, warmup: u64) -> f64 {
    let (s, w, d) = (step as f64, warmup as f64, d_model as f64);
    let _ = d;
    s.powf(-0.5).min(s * w.powf(-1.5))
}
