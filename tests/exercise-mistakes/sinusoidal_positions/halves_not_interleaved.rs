//! A plausible wrong answer to `sinusoidal_positions`; the grader must fail it.
//! expect: interleaved
use tch::{Device, Kind, Tensor};

pub fn sinusoidal_positions(max_len: i64, d: i64, device: Device) -> Tensor {
    let pos = Tensor::arange(max_len, (Kind::Float, device)).unsqueeze(1);
    let i = Tensor::arange(d / 2, (Kind::Float, device));
    let angle = pos * ((i * 2.0) * (-(10000f64.ln()) / d as f64)).exp();
    Tensor::cat(&[angle.sin(), angle.cos()], 1)
}
