//! # Exercise: the warm-up schedule
//!
//! The paper's learning rate grows linearly for `warmup` steps, then decays with the inverse square root
//! of the step:
//!
//! `lr(step) = d_model^(−1/2) · min(step^(−1/2), step · warmup^(−3/2))`
//!
//! Steps count from 1. The two branches meet at `step = warmup`, the peak.
//! Chapter: `chapters/10-training.md`. Check: `cargo anatomy exercises check warmup_schedule`.
#![allow(unused_variables)] // remove once the body is written

pub fn learning_rate(step: u64, d_model: i64, warmup: u64) -> f64 {
    todo!("d_model^(−1/2) · min(step^(−1/2), step · warmup^(−3/2))")
}
