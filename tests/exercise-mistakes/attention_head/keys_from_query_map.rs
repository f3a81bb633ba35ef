//! A plausible wrong answer to `attention_head`; the grader must fail it.
//! expect: keys come from the query map
use tch::nn::Module;
use tch::{Kind, Tensor};
pub use transformer_anatomy::exercises::support::Projections;

pub fn attention_head(x: &Tensor, p: &Projections) -> Tensor {
    let (q, k, v) = (p.query.forward(x), p.query.forward(x), p.value.forward(x));
    let scale = (*q.size().last().unwrap() as f64).sqrt();
    (q.bmm(&k.transpose(1, 2)) / scale).softmax(-1, Kind::Float).bmm(&v)
}
