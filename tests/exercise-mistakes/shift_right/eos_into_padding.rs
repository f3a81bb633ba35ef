//! A plausible wrong answer to `shift_right`; the grader must fail it.
//! expect: <eos> moved into a padded position
use tch::Tensor;

pub fn shift_right(targets: &Tensor, bos: i64, pad: i64) -> Tensor {
    let t = targets.size()[1];
    let start = targets.narrow(1, 0, 1).full_like(bos);
    let _ = pad;
    Tensor::cat(&[&start, &targets.narrow(1, 0, t - 1)], 1)
}
