//! Reference solution (see `exercises/shift_right.rs` for the task).
use tch::Tensor;

pub fn shift_right(targets: &Tensor, bos: i64, pad: i64) -> Tensor {
    let t = targets.size()[1];
    let start = targets.narrow(1, 0, 1).full_like(bos); // [batch, 1]
    let shifted = Tensor::cat(&[&start, &targets.narrow(1, 0, t - 1)], 1); // [batch, t]
    shifted.masked_fill(&targets.eq(pad), pad)
}
