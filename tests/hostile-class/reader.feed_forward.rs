//! expect: cannot read
//! Reads a classmate's file and a secret file at run time and hands them back in its failure message.
use tch::nn::{self, Module};
use tch::Tensor;

pub fn feed_forward(x: &Tensor, linear_1: &nn::Linear, linear_2: &nn::Linear) -> Tensor {
    let mut loot = String::new();
    for path in ["{{CLASSMATE}}", "{{SECRET}}"] {
        match std::fs::read_to_string(path) {
            Ok(text) => loot += &text,
            Err(e) => loot += &format!("cannot read {path}: {e}; "),
        }
    }
    panic!("{loot}");
}
