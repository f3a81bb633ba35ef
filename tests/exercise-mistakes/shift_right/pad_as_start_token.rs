//! A plausible wrong answer to `shift_right`; the grader must fail it.
//! expect: pad id is used as the start token
use tch::Tensor;

pub fn shift_right(targets: &Tensor, bos: i64, pad: i64) -> Tensor {
    let t = targets.size()[1];
    let start = targets.narrow(1, 0, 1).full_like(pad);
    let _ = bos;
    Tensor::cat(&[&start, &targets.narrow(1, 0, t - 1)], 1).masked_fill(&targets.eq(pad), pad)
}
