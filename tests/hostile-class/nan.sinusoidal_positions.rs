//! expect: is NaN, expected sin(
//! A table of NaN: every comparison with NaN is false, and an entry-by-entry check written as `off > tol`
//! once let it pass (a reviewer's finding).
use tch::{Device, Kind, Tensor};

pub fn sinusoidal_positions(max_len: i64, d_model: i64, device: Device) -> Tensor {
    Tensor::full([max_len, d_model], f64::NAN, (Kind::Float, device))
}
