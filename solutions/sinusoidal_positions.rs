//! Reference solution (see `exercises/sinusoidal_positions.rs` for the task).
use tch::{Device, Kind, Tensor};

pub fn sinusoidal_positions(max_len: i64, d_model: i64, device: Device) -> Tensor {
    let position = Tensor::arange(max_len, (Kind::Float, device)).unsqueeze(1); // [max_len, 1]
    let two_i = Tensor::arange_start_step(0, d_model, 2, (Kind::Float, device)); // [d_model / 2]
    let frequency = (two_i * (-(10000f64.ln()) / d_model as f64)).exp(); // [d_model / 2]
    let angle = position * frequency; // [max_len, d_model / 2]
    let table = Tensor::zeros([max_len, d_model], (Kind::Float, device));
    // Even columns take the sines, odd columns the cosines.
    let (mut even, mut odd) = (table.slice(1, 0, d_model, 2), table.slice(1, 1, d_model, 2)); // views
    even.copy_(&angle.sin());
    odd.copy_(&angle.cos());
    table
}
