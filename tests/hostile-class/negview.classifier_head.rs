//! expect: logits: differs from the expected values
//! Returns a view whose value is the answer negated while its memory still holds the answer (LibTorch keeps
//! a negation as a flag on the view): a grader that copied memory would read the right logits. The judge
//! reads the value.
use tch::nn::{self, Module};
use tch::Tensor;

pub fn classifier_head(hidden_states: &Tensor, classifier: &nn::Linear) -> Tensor {
    classifier.forward(&hidden_states.select(1, 0)).internal_neg_view()
}
