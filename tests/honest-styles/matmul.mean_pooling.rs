//! The sum over the real tokens as a product with the mask, `[batch, 1, seq] · [batch, seq, hidden]`.
use tch::{Kind, Tensor};

pub fn mean_pooling(hidden_states: &Tensor, attention_mask: &Tensor) -> Tensor {
    let mask = attention_mask.to_kind(Kind::Float); // [batch, seq]
    let summed = mask.unsqueeze(1).bmm(hidden_states).squeeze_dim(1); // [batch, hidden]
    let counts = mask.sum_dim_intlist(1, true, Kind::Float).clamp_min(1e-9); // [batch, 1]
    summed / counts
}
