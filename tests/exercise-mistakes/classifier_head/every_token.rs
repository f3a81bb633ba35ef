//! A plausible wrong answer to `classifier_head`; the grader must fail it.
//! expect: take the first token's state
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

pub fn classifier_head(hidden_states: &Tensor, classifier: &nn::Linear) -> Tensor {
    classifier.forward(hidden_states)
}
