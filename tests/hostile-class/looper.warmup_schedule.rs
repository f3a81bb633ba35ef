//! expect: timed out after
//! Never returns.
pub fn learning_rate(step: u64, d_model: i64, warmup: u64) -> f64 {
    let mut x = step as f64;
    loop {
        x = std::hint::black_box(x + 1.0);
    }
}
