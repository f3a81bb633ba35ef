//! A plausible wrong answer to `shift_right`; the grader must fail it.
//! expect: not shifted
use tch::Tensor;

pub fn shift_right(targets: &Tensor, bos: i64, pad: i64) -> Tensor {
    let t = targets.size()[1];
    let _ = (bos, t);
    targets.masked_fill(&targets.eq(pad), pad)
}
