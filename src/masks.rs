//! # Masks — the causal mask, and padding (`chapters/08-decoder-and-masking.md`)
//!
//! A decoder that writes text one token at a time must not peek at the tokens it has not written yet.
//! The causal mask is a lower-triangular matrix of ones: row `i` may attend to positions `0..=i` only.
//! Setting the scores above the diagonal to `-inf` before the softmax (see
//! [`apply_mask`](crate::scaled_dot_product::apply_mask)) gives those positions exactly zero weight.
//! Batches bring a second kind of mask: shorter sequences are filled up with a padding id, and no token
//! should attend to those filler positions.
//!
//! Every mask here uses one convention: 1 where attention is allowed, 0 where it is blocked, in a shape
//! that broadcasts against the scores `[batch, s_q, s_k]`.
//!
//! Chapter section: [`chapters/08-decoder-and-masking.md`](../chapters/08-decoder-and-masking.md) ·
//! notebook `notebooks/08-decoder-and-masking.ipynb`.
use tch::{Device, Kind, Tensor};

/// `tril(ones(n, n))`: 1 where a query (row) may look at a key (column), 0 above the diagonal.
///
/// ```
/// use tch::Device;
/// use transformer_anatomy::causal_mask;
///
/// let mask = causal_mask(3, Device::Cpu); // [3, 3]
/// let rows: Vec<Vec<f32>> = Vec::<Vec<f32>>::try_from(&mask).unwrap();
/// assert_eq!(rows, [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]);
/// ```
pub fn causal_mask(n: i64, device: Device) -> Tensor {
    Tensor::ones([n, n], (Kind::Float, device)).tril(0) // [n, n]
}

/// 1 for real tokens and 0 for padding, shaped `[batch, 1, seq]` so that it blocks the padded *keys* for
/// every query.
///
/// ```
/// use tch::Tensor;
/// use transformer_anatomy::padding_mask;
///
/// let ids = Tensor::from_slice(&[6i64, 7, 8, 0, 0]).view([1, 5]);
/// let mask = padding_mask(&ids, 0); // [1, 1, 5]
/// assert_eq!(Vec::<f32>::try_from(&mask.flatten(0, -1)).unwrap(), [1.0, 1.0, 1.0, 0.0, 0.0]);
/// ```
pub fn padding_mask(ids: &Tensor, pad_id: i64) -> Tensor {
    ids.ne(pad_id).to_kind(Kind::Float).unsqueeze(1) // [batch, 1, seq]
}

/// The decoder's self-attention mask: a target position may look neither at later positions nor at
/// padding. The causal and padding masks multiplied, `[batch, seq, seq]`.
pub fn decoder_mask(target_ids: &Tensor, pad_id: i64) -> Tensor {
    let seq = target_ids.size()[1];
    causal_mask(seq, target_ids.device()) * padding_mask(target_ids, pad_id) // [batch, seq, seq]
}
