//! The table written entry by entry in plain Rust, then handed to LibTorch once.
use tch::{Device, Tensor};

pub fn sinusoidal_positions(max_len: i64, d_model: i64, device: Device) -> Tensor {
    let mut table = Vec::with_capacity((max_len * d_model) as usize);
    for pos in 0..max_len {
        for column in 0..d_model {
            let pair = (column / 2) * 2;
            let angle = pos as f64 / 10000f64.powf(pair as f64 / d_model as f64);
            table.push((if column % 2 == 0 { angle.sin() } else { angle.cos() }) as f32);
        }
    }
    Tensor::from_slice(&table).view([max_len, d_model]).to_device(device)
}
