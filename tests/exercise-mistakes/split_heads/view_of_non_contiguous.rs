//! A plausible wrong answer to `split_heads`; the grader must fail it.
//! expect: not contiguous
use tch::Tensor;

pub fn split_heads(x: &Tensor, num_heads: i64) -> Tensor {
    let (b, s, h) = x.size3().unwrap();
    x.view([b, s, num_heads, h / num_heads]).transpose(1, 2)
}

pub fn merge_heads(x: &Tensor) -> Tensor {
    let (b, n, s, d) = x.size4().unwrap();
    x.transpose(1, 2).view([b, s, n * d])
}
