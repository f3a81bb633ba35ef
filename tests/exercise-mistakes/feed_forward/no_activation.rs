//! A plausible wrong answer to `feed_forward`; the grader must fail it.
//! expect: no activation
use tch::nn::{self, Module};
use tch::Tensor;

pub fn feed_forward(x: &Tensor, linear_1: &nn::Linear, linear_2: &nn::Linear) -> Tensor {
    linear_2.forward(&linear_1.forward(x))
}
