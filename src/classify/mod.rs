//! # Chapter 12: the body and a head on a real task (a spam filter)
//!
//! Section 7 put a classification head on the encoder and stopped where its weights were random. This
//! part gives the head a task: SpamAssassin's public corpus ([`data`]), MiniLM's encoder as the body,
//! and a sentence vector pooled from its last hidden state ([`pool`]) as what the head reads.
pub mod data;
pub mod features;
pub mod fine_tune;
pub mod frozen;

use tch::{Kind, Tensor};

/// How a sequence of hidden states becomes one vector per text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// The hidden state of the first token, `[CLS]`: what BERT's pre-training asked to summarise the
    /// text, and what the book's head reads. all-MiniLM-L6-v2 was never trained to put a summary there.
    Cls,
    /// The mean over the real tokens (padding left out): what all-MiniLM-L6-v2 was trained to produce
    /// (its sentence-transformers configuration pools by the mean), before its length-1 scaling.
    Mean,
}

/// The masked mean of `hidden` `[batch, seq, h]` over the positions where `mask` `[batch, seq]` is 1:
/// sentence-transformers' formula, `Σ hᵢ·mᵢ / max(Σ mᵢ, 1e-9)`. A row with no real token gives 0.
pub fn masked_mean(hidden: &Tensor, mask: &Tensor) -> Tensor {
    let mask = mask.to_kind(hidden.kind()).unsqueeze(-1); // [batch, seq, 1]
    let summed = (hidden * &mask).sum_dim_intlist(1, false, hidden.kind()); // [batch, h]
    summed / mask.sum_dim_intlist(1, false, Kind::Float).clamp_min(1e-9) // [batch, h]
}

/// One vector per text: `[batch, seq, h]` (and the padding mask `[batch, seq]`) → `[batch, h]`.
pub fn pool(hidden: &Tensor, mask: &Tensor, pooling: Pooling) -> Tensor {
    match pooling {
        Pooling::Cls => hidden.select(1, 0), // [batch, h]
        Pooling::Mean => masked_mean(hidden, mask),
    }
}
