//! Reference solution (see `exercises/mean_pooling.rs` for the task).
use tch::{Kind, Tensor};

pub fn mean_pooling(hidden_states: &Tensor, attention_mask: &Tensor) -> Tensor {
    let mask = attention_mask.to_kind(hidden_states.kind()).unsqueeze(-1); // [batch, seq, 1]
    let summed = (hidden_states * &mask).sum_dim_intlist(1, false, hidden_states.kind()); // [batch, hidden]
    let counts = mask.sum_dim_intlist(1, false, Kind::Float).clamp_min(1e-9); // [batch, 1]
    summed / counts
}
