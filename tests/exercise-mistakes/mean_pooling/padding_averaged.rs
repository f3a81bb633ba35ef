//! A plausible wrong answer to `mean_pooling`; the grader must fail it.
//! expect: the padding is averaged in
use tch::{Kind, Tensor};

pub fn mean_pooling(hidden_states: &Tensor, attention_mask: &Tensor) -> Tensor {
    hidden_states.mean_dim(1, false, Kind::Float)
}
