//! # Step 14: the causal mask
//!
//! A decoder that writes text one token at a time must not peek at the tokens it has not written yet.
//! The causal mask is a lower-triangular matrix of ones: row `i` may attend to positions `0..=i` only.
//! Setting the scores above the diagonal to `-inf` before the softmax (see
//! [`apply_mask`](crate::scaled_dot_product::apply_mask)) gives those positions exactly zero weight.
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
