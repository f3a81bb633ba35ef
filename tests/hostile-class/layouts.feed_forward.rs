//! expect: passed
//! The right output in MKL-DNN's own layout: read by value, it passes.
use tch::nn::{self, Module};
use tch::Tensor;

pub fn feed_forward(x: &Tensor, linear_1: &nn::Linear, linear_2: &nn::Linear) -> Tensor {
    linear_2.forward(&linear_1.forward(x).gelu("none")).g_to_mkldnn(None)
}
