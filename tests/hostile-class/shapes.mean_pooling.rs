//! expect: pooled, for a text with no real token: expected shape [1, 8], got [8]
//! Pools right, but answers the second call (a text whose every position is padding) with a vector of
//! zeros without its batch axis: its values alone would pass, its shape must not.
use tch::{Kind, Tensor};

pub fn mean_pooling(hidden_states: &Tensor, attention_mask: &Tensor) -> Tensor {
    let hidden = hidden_states.size()[2];
    if attention_mask.sum(Kind::Int64).int64_value(&[]) == 0 {
        return Tensor::zeros([hidden], (Kind::Float, hidden_states.device()));
    }
    let mask = attention_mask.to_kind(Kind::Float).unsqueeze(-1);
    (hidden_states * &mask).sum_dim_intlist(1, false, Kind::Float) / mask.sum_dim_intlist(1, false, Kind::Float)
}
