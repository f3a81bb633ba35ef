//! A plausible wrong answer to `cross_attention`; the grader must fail it.
//! expect: transpose the keys
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
    let weights = p.query.forward(dec).bmm(&p.key.forward(enc)).softmax(-1, Kind::Float);
    let _ = (attention, padding);
    (weights.bmm(&p.value.forward(enc)), weights)
}
