//! A plausible wrong answer to `attention_head`; the grader must fail it.
//! expect: divided by √d_model
use tch::nn::Module;
use tch::{Kind, Tensor};
pub use transformer_anatomy::exercises::support::Projections;

pub fn attention_head(x: &Tensor, p: &Projections) -> Tensor {
    let (q, k, v) = (p.query.forward(x), p.key.forward(x), p.value.forward(x));
    // The model's width, read off the input: the hidden state's last axis, not the head's.
    let d_model = *x.size().last().unwrap() as f64;
    (q.bmm(&k.transpose(1, 2)) / d_model.sqrt()).softmax(-1, Kind::Float).bmm(&v)
}
