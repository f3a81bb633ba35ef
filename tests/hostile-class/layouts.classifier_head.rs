//! expect: passed
//! The right logits as a compressed sparse row (CSR) matrix: read by value, they pass.
use tch::nn::{self, Module};
use tch::Tensor;

pub fn classifier_head(hidden_states: &Tensor, classifier: &nn::Linear) -> Tensor {
    classifier.forward(&hidden_states.select(1, 0)).to_sparse_csr(None)
}
