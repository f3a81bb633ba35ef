//! A plausible wrong answer to `cached_attention`; the grader must fail it.
//! expect: a causal mask is applied
use tch::{Device, Kind, Tensor};

pub fn cached_attention(pk: &Tensor, pv: &Tensor, q: &Tensor, k: &Tensor, v: &Tensor) -> (Tensor, Tensor, Tensor) {
    let d = *q.size().last().unwrap() as f64;
    let (keys, values) = (Tensor::cat(&[pk, k], 2), Tensor::cat(&[pv, v], 2));
    let t = keys.size()[2];
    // A square causal mask's first row, used for the one query: only position 0 stays visible.
    let mask = Tensor::ones([t, t], (Kind::Float, Device::Cpu)).tril(0).narrow(0, 0, 1);
    let scores = (q.matmul(&keys.transpose(-2, -1)) / d.sqrt()).masked_fill(&mask.eq(0), f64::NEG_INFINITY);
    (scores.softmax(-1, Kind::Float).matmul(&values), keys, values)
}
