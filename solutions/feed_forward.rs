//! Reference solution (see `exercises/feed_forward.rs` for the task).
use tch::nn::{self, Module};
use tch::Tensor;

pub fn feed_forward(x: &Tensor, linear_1: &nn::Linear, linear_2: &nn::Linear) -> Tensor {
    let h = linear_1.forward(x).gelu("none"); // [batch, seq, intermediate]
    linear_2.forward(&h) // [batch, seq, hidden]
}
