//! # Scaled dot-product attention, one operation at a time (`chapters/02-self-attention.md`)
//!
//! Attention lets every token build its new vector as a weighted average of all the value vectors in the
//! sequence. The weights come from comparing the token's query with every key: a dot product, scaled by
//! `1/√d_k` so that the softmax does not saturate as vectors get longer. Each function here is one box of
//! the chapter's diagram, so a learner can run them one after another and look at every intermediate
//! tensor; [`scaled_dot_product_attention`] chains them.
//!
//! Shapes: queries `[batch, s_q, d_k]`, keys `[batch, s_k, d_k]`, values `[batch, s_k, d_v]`. A leading
//! head axis (`[batch, heads, s, d]`) works the same way, which the fused multi-head attention uses.
//!
//! Chapter section: [`chapters/02-self-attention.md`](../chapters/02-self-attention.md) ·
//! notebook `notebooks/02-self-attention.ipynb`.
use tch::Tensor;

/// The recipe's step 2, *scores*: how well each query matches each key, `q · kᵀ / √d_k`.
///
/// For 3-D inputs this is exactly the chapter's `torch.bmm(query, key.transpose(1, 2)) / sqrt(dim_k)`;
/// with a head axis it uses `matmul`, which batches over every leading axis.
pub fn attention_scores(query: &Tensor, key: &Tensor) -> Tensor {
    let d_k = *key.size().last().expect("keys need at least one dimension") as f64;
    let key_t = key.transpose(-2, -1); // [batch, d_k, s_k]
    let products = if query.dim() == 3 { query.bmm(&key_t) } else { query.matmul(&key_t) };
    products / d_k.sqrt() // [batch, s_q, s_k]
}

/// Blocks the positions where `mask` is 0 (or `false`) by setting their scores to `-inf`, so that the
/// softmax gives them exactly zero weight. `mask` must broadcast against the scores, e.g. `[s_q, s_k]`
/// for a causal mask or `[batch, 1, s_k]` for padding.
pub fn apply_mask(scores: &Tensor, mask: &Tensor) -> Tensor {
    scores.masked_fill(&mask.eq(0), f64::NEG_INFINITY)
}

/// The recipe's step 3, *weights*: turns each row of scores into weights that are positive and sum to 1 (a softmax over the keys).
pub fn attention_weights(scores: &Tensor) -> Tensor {
    scores.softmax(-1, scores.kind()) // [batch, s_q, s_k], rows sum to 1
}

/// *Weights* with a mask (*Masks, and the row that may look at nothing*): positions where `mask` is 0 get weight exactly 0.
///
/// A row whose every position is masked (a query that may look at nothing, such as a padding token under
/// a padding mask) has no meaningful softmax: `0/0` would make it NaN and poison every later layer. We
/// define such a row to be all zeros, so that query's output is the zero vector. libtorch's own
/// `scaled_dot_product_attention` does the same.
pub fn masked_attention_weights(scores: &Tensor, mask: &Tensor) -> Tensor {
    let weights = attention_weights(&apply_mask(scores, mask));
    // Found on the mask, which is small ([s_q, s_k] or [batch, 1, s_k]), rather than on the scores. The
    // fill runs whether or not such a row exists: asking first would make the device answer a question
    // (and wait for it) in every head of every layer.
    let blind_rows = mask.eq(0).all_dim(-1, true); // [.., s_q, 1]
    weights.masked_fill(&blind_rows, 0.0)
}

/// The recipe's step 4, *weighted sum*: each query's output is the weighted sum of the value vectors, `weights · v`.
pub fn attend(weights: &Tensor, value: &Tensor) -> Tensor {
    if weights.dim() == 3 {
        weights.bmm(value) // [batch, s_q, d_v]
    } else {
        weights.matmul(value)
    }
}

/// The recipe's steps 2–4 together, returning the output and the attention weights (for pictures and tests).
pub fn attention_with_weights(query: &Tensor, key: &Tensor, value: &Tensor, mask: Option<&Tensor>) -> (Tensor, Tensor) {
    attention_with_dropout(query, key, value, mask, 0.0, false)
}

/// Like [`attention_with_weights`], with dropout on the weights while training, as BERT does it. The
/// returned weights are the ones before dropout (what a picture of the attention should show).
pub fn attention_with_dropout(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    mask: Option<&Tensor>,
    dropout: f64,
    train: bool,
) -> (Tensor, Tensor) {
    let scores = attention_scores(query, key);
    let weights = match mask {
        Some(mask) => masked_attention_weights(&scores, mask),
        None => attention_weights(&scores),
    };
    let output =
        if train && dropout > 0.0 { attend(&weights.dropout(dropout, true), value) } else { attend(&weights, value) };
    (output, weights)
}

/// The whole of scaled dot-product attention, `softmax(q kᵀ / √d_k + mask) · v`.
///
/// ```
/// use tch::{Device, Kind, Tensor};
/// use transformer_anatomy::{causal_mask, scaled_dot_product_attention};
///
/// let x = Tensor::arange(20, (Kind::Float, Device::Cpu)).reshape([1, 5, 4]) / 10.0; // [batch, seq, dim]
/// let out = scaled_dot_product_attention(&x, &x, &x, None);
/// assert_eq!(out.size(), [1, 5, 4]);
/// // With a causal mask, the first token can only attend to itself, so its output is its own value.
/// let causal = scaled_dot_product_attention(&x, &x, &x, Some(&causal_mask(5, Device::Cpu)));
/// assert!(causal.get(0).get(0).allclose(&x.get(0).get(0), 1e-6, 1e-6, false));
/// ```
pub fn scaled_dot_product_attention(query: &Tensor, key: &Tensor, value: &Tensor, mask: Option<&Tensor>) -> Tensor {
    attention_with_weights(query, key, value, mask).0
}
