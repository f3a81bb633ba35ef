//! A plausible wrong answer to `cross_attention`; the grader must fail it.
//! expect: divided by head_dim; divide by √head_dim
use tch::nn::Module;
use tch::{Kind, Tensor};
pub use transformer_anatomy::exercises::support::Projections;

fn attention(q: &Tensor, k: &Tensor, v: &Tensor, scale: f64, padding: Option<&Tensor>) -> (Tensor, Tensor) {
    let mut scores = q.bmm(&k.transpose(1, 2)) / scale;
    if let Some(p) = padding {
        scores = scores.masked_fill(&p.eq(0).unsqueeze(1), f64::NEG_INFINITY);
    }
    let weights = scores.softmax(-1, Kind::Float);
    (weights.bmm(v), weights)
}

pub fn cross_attention(dec: &Tensor, enc: &Tensor, p: &Projections, padding: Option<&Tensor>) -> (Tensor, Tensor) {
    attention(&p.query.forward(dec), &p.key.forward(enc), &p.value.forward(enc), 8.0, padding)
}
