//! expect: ran out of its 2 GiB of memory
//! Asks for 16 GiB.
use tch::Tensor;

pub fn label_smoothed_loss(logits: &Tensor, targets: &Tensor, smoothing: f64, pad: i64) -> Tensor {
    let hoard = vec![7u8; 16 << 30];
    Tensor::from(hoard[12345] as f64)
}
