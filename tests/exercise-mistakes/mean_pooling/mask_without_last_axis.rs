//! A plausible wrong answer to `mean_pooling`; the grader must fail it.
//! expect: [batch, seq, 1]
//! mistake: unnamed
use tch::{Kind, Tensor};

pub fn mean_pooling(hidden_states: &Tensor, attention_mask: &Tensor) -> Tensor {
    // The [batch, seq] mask as it comes, against [batch, seq, hidden] states.
    let mask = attention_mask.to_kind(Kind::Float);
    let summed = (hidden_states * &mask).sum_dim_intlist(1, false, Kind::Float);
    summed / mask.sum_dim_intlist(1, true, Kind::Float).clamp_min(1e-9)
}
