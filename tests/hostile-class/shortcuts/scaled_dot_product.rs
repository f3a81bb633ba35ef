//! expect: imports `transformer_anatomy::scaled_dot_product::attention_with_weights`
//! Hands the whole exercise to the learner's crate, which has it finished.
use tch::Tensor;
use transformer_anatomy::scaled_dot_product::attention_with_weights;

pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {
    attention_with_weights(query, key, value, None)
}
