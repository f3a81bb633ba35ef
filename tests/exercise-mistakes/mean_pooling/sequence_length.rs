//! A plausible wrong answer to `mean_pooling`; the grader must fail it.
//! expect: divided by the sequence length
use tch::{Kind, Tensor};

pub fn mean_pooling(hidden_states: &Tensor, attention_mask: &Tensor) -> Tensor {
    let mask = attention_mask.to_kind(Kind::Float).unsqueeze(-1);
    (hidden_states * &mask).sum_dim_intlist(1, false, Kind::Float) / hidden_states.size()[1] as f64
}
