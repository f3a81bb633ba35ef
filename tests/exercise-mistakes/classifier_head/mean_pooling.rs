//! A plausible wrong answer to `classifier_head`; the grader must fail it.
//! expect: averaged
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

pub fn classifier_head(hidden_states: &Tensor, classifier: &nn::Linear) -> Tensor {
    classifier.forward(&hidden_states.mean_dim(1, false, Kind::Float))
}
