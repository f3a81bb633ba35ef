//! expect: compiling took more than 30 s
//! A constant whose evaluation never ends, with the compiler's warning about it switched off.
use tch::{Device, Tensor};

#[allow(long_running_const_eval)]
const FOREVER: u64 = {
    let mut n = 1u64;
    while n != 0 {
        n = n.wrapping_mul(3) | 1;
    }
    n
};

pub fn causal_mask(n: i64, device: Device) -> Tensor {
    Tensor::ones([n, n], (tch::Kind::Float, device)).tril(FOREVER as i64)
}

pub fn masked_softmax(scores: &Tensor, mask: &Tensor) -> Tensor {
    scores.softmax(-1, tch::Kind::Float)
}
