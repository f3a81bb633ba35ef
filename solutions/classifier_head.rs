//! Reference solution (see `exercises/classifier_head.rs` for the task).
use tch::nn::{self, Module};
use tch::Tensor;

pub fn classifier_head(hidden_states: &Tensor, classifier: &nn::Linear) -> Tensor {
    let cls = hidden_states.select(1, 0); // [batch, hidden]
    classifier.forward(&cls) // [batch, num_labels]
}
