//! A plausible wrong answer to `split_heads`; the grader must fail it.
//! expect: swap axes 1 and 2
use tch::Tensor;

pub fn split_heads(x: &Tensor, num_heads: i64) -> Tensor {
    let (b, s, h) = x.size3().unwrap();
    x.view([b, s, num_heads, h / num_heads])
}

pub fn merge_heads(x: &Tensor) -> Tensor {
    let (b, n, s, d) = x.size4().unwrap();
    x.transpose(1, 2).contiguous().view([b, s, n * d])
}
