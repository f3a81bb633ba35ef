//! The second file of the student whose `macros.mean_pooling.rs` exports a macro named `summed`: this one
//! exports its own `summed`, over the last axis. Neither breaks the other.
use tch::{Kind, Tensor};

/// The mean over the last axis, kept as an axis of 1.
#[macro_export]
macro_rules! summed {
    ($t:expr) => {
        $t.mean_dim(-1, true, Kind::Float)
    };
}

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let centred = x - summed!(x); // [batch, seq, hidden]
    let variance = summed!(&centred * &centred); // biased: divided by n
    centred / (variance + eps).sqrt() * weight + bias
}
