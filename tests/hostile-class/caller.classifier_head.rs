//! expect: uses `#[path]`, which makes another file part of this one
//! Takes a classmate's file as a module of its own and calls the classmate's function. Refused by the
//! rules before compiling; behind them, the compiler's sandbox has no class folder to read it from.
use tch::nn;
use tch::Tensor;

#[path = "{{CLASSMATE}}"]
mod classmate;

pub fn classifier_head(hidden_states: &Tensor, classifier: &nn::Linear) -> Tensor {
    classmate::classifier_head(hidden_states, classifier)
}
