//! A plausible wrong answer to `cached_attention`; the grader must fail it.
//! expect: append along the positions axis
use tch::{Device, Kind, Tensor};

pub fn cached_attention(pk: &Tensor, pv: &Tensor, q: &Tensor, k: &Tensor, v: &Tensor) -> (Tensor, Tensor, Tensor) {
    let d = *q.size().last().unwrap() as f64;
    let (keys, values) = (Tensor::cat(&[pk, k], 3), Tensor::cat(&[pv, v], 3));
    let w = (q.matmul(&Tensor::cat(&[pk, k], 2).transpose(-2, -1)) / d.sqrt()).softmax(-1, Kind::Float);
    (w.matmul(&Tensor::cat(&[pv, v], 2)), keys, values)
}
