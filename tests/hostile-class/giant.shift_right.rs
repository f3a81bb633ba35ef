//! expect: over the 8 MiB the grader reads of one answer
//! mistake: too_large
//! Returns 24 MiB of token ids for one answer: the grader sees an answer over its limit on the channel,
//! stops the check and says which limit, where it once read the end of the channel as an exit.
use tch::{Kind, Tensor};

pub fn shift_right(targets: &Tensor, bos: i64, pad: i64) -> Tensor {
    Tensor::zeros([3, 1 << 20], (Kind::Int64, targets.device()))
}
