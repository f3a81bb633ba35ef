//! A plausible wrong answer to `feed_forward`; the grader must fail it.
//! expect: applies linear_2 twice
use tch::nn::{self, Module};
use tch::Tensor;

pub fn feed_forward(x: &Tensor, linear_1: &nn::Linear, linear_2: &nn::Linear) -> Tensor {
    // As a miscopied listing of the chapter has it (the book applies linear_2 once).
    let h = linear_1.forward(x).gelu("none");
    let h = linear_2.forward(&h);
    linear_2.forward(&h)
}
