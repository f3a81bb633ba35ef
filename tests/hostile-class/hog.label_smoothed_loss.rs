//! expect: aborted; it reported: memory allocation of 17179869184 bytes failed
//! mistake: crashed
//! Asks for 16 GiB at once, past the kernel's limit on its address space: the allocation fails at once, the
//! process aborts, and only its own words say why (the grader reports them as such).
use tch::Tensor;

pub fn label_smoothed_loss(logits: &Tensor, targets: &Tensor, smoothing: f64, pad: i64) -> Tensor {
    let hoard = vec![7u8; 16 << 30];
    Tensor::from(hoard[12345] as f64)
}
