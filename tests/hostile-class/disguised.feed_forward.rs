//! expect: names `include`, which reads another file at compile time
//! Brings in a classmate file of its own under a renamed `include!`: the student's files are compiled
//! side by side, and another exercise (one that forbids nothing) may hold what this one forbids. The
//! rules once refused `include` only where `!` followed the name.
use tch::nn::{self, Module};
use tch::Tensor;

mod other {
    use std::include as inc;
    inc!("f001.rs");
}

pub fn feed_forward(x: &Tensor, linear_1: &nn::Linear, linear_2: &nn::Linear) -> Tensor {
    let h = linear_1.forward(x).gelu("none");
    linear_2.forward(&h)
}
