//! A plausible wrong answer to `cached_attention`; the grader must fail it.
//! expect: does not attend to itself
use tch::{Device, Kind, Tensor};

pub fn cached_attention(pk: &Tensor, pv: &Tensor, q: &Tensor, k: &Tensor, v: &Tensor) -> (Tensor, Tensor, Tensor) {
    let d = *q.size().last().unwrap() as f64;
    let (keys, values) = (Tensor::cat(&[pk, k], 2), Tensor::cat(&[pv, v], 2));
    let w = (q.matmul(&pk.transpose(-2, -1)) / d.sqrt()).softmax(-1, Kind::Float);
    (w.matmul(pv), keys, values)
}
