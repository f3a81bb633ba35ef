//! A plausible wrong answer to `classifier_head`; the grader must fail it.
//! expect: last token
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

pub fn classifier_head(hidden_states: &Tensor, classifier: &nn::Linear) -> Tensor {
    let seq = hidden_states.size()[1];
    classifier.forward(&hidden_states.select(1, seq - 1))
}
