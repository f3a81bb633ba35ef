//! # Pooling: one vector per text
//!
//! An encoder gives one hidden state per token; a sentence embedding or a classifier needs one vector per
//! text. The masked mean averages the token vectors and leaves the padding out, so that a short text in a
//! padded batch gets the same vector as alone. It sits below both of its readers: the pretrained model's
//! sentence embedding ([`crate::pretrained::mean_pooled_embedding`]) and chapter 12's head
//! ([`crate::classify::pool`]).
use tch::{Kind, Tensor};

/// The masked mean of `hidden` `[batch, seq, h]` over the positions where `mask` `[batch, seq]` is 1:
/// sentence-transformers' formula, `Σ hᵢ·mᵢ / max(Σ mᵢ, 1e-9)`. A row with no real token gives 0.
pub fn masked_mean(hidden: &Tensor, mask: &Tensor) -> Tensor {
    let mask = mask.to_kind(hidden.kind()).unsqueeze(-1); // [batch, seq, 1]
    let summed = (hidden * &mask).sum_dim_intlist(1, false, hidden.kind()); // [batch, h]
    summed / mask.sum_dim_intlist(1, false, Kind::Float).clamp_min(1e-9) // [batch, h]
}
