//! expect: passed
//! Answers right, and changes what the process shares: a panic hook that aborts the process at the next
//! panic (a stub's `todo!()` is one), gradients switched off for good, the generator seeded to a constant.
//! Its classmate file globals.warmup_schedule.rs is the untouched stub: when every check shared a process,
//! its `todo!()` aborted the probe; now it is "not done", as it should be.
use tch::{Device, Kind, Tensor};

pub fn sinusoidal_positions(max_len: i64, d_model: i64, device: Device) -> Tensor {
    let position = Tensor::arange(max_len, (Kind::Float, device)).unsqueeze(1);
    let two_i = Tensor::arange_start_step(0, d_model, 2, (Kind::Float, device));
    let angle = position * (two_i * (-(10000f64.ln()) / d_model as f64)).exp();
    let table = Tensor::stack(&[angle.sin(), angle.cos()], -1).view([max_len, d_model]);
    std::panic::set_hook(Box::new(|_| std::process::abort()));
    std::mem::forget(tch::no_grad_guard());
    tch::manual_seed(7);
    table
}
