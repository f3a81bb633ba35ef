//! # Sinusoidal positional encoding (the original Transformer's)
//!
//! Instead of learning one vector per position, as BERT does, the 2017 Transformer adds a fixed pattern:
//! dimension `2i` of position `pos` holds `sin(pos / 10000^(2i / d_model))` and dimension `2i + 1` holds
//! the cosine of the same angle. Each pair of dimensions is a clock turning at its own speed, from one
//! turn every 2π positions to one every 10000·2π, so every position gets a distinct code, nearby
//! positions get similar codes, and sequences longer than any seen in training still get one.
//!
//! Chapter section: [`chapters/08-decoder-and-masking.md`](../chapters/08-decoder-and-masking.md).
use tch::{Device, Kind, Tensor};

/// The encoding table `[max_len, d_model]` (`d_model` even). The frequencies are computed in log space,
/// `exp(-2i · ln(10000) / d_model)`, which avoids raising 10000 to large powers.
pub fn sinusoidal_positions(max_len: i64, d_model: i64, device: Device) -> Tensor {
    assert!(d_model % 2 == 0, "the sinusoidal encoding pairs dimensions, so d_model must be even (got {d_model})");
    let position = Tensor::arange(max_len, (Kind::Float, device)).unsqueeze(1); // [max_len, 1]
    let two_i = Tensor::arange_start_step(0, d_model, 2, (Kind::Float, device)); // [d_model / 2]
    let frequency = (two_i * (-(10000f64.ln()) / d_model as f64)).exp();
    let angle = position * frequency.unsqueeze(0); // [max_len, d_model / 2]
                                                   // Interleave: even dimensions get the sines, odd dimensions the cosines.
    Tensor::stack(&[angle.sin(), angle.cos()], -1).view([max_len, d_model]) // [max_len, d_model]
}
