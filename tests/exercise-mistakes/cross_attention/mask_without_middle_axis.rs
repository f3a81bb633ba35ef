//! A plausible wrong answer to `cross_attention`; the grader must fail it.
//! expect: [batch, 1, source]
use tch::nn::Module;
use tch::{Kind, Tensor};
pub use transformer_anatomy::exercises::support::Projections;

pub fn cross_attention(dec: &Tensor, enc: &Tensor, p: &Projections, padding: Option<&Tensor>) -> (Tensor, Tensor) {
    let (q, k, v) = (p.query.forward(dec), p.key.forward(enc), p.value.forward(enc));
    let head_dim = *q.size().last().unwrap() as f64;
    let mut scores = q.bmm(&k.transpose(1, 2)) / head_dim.sqrt();
    if let Some(padding) = padding {
        // The [batch, s] mask as it comes, against [batch, t, s] scores.
        scores = scores.masked_fill(&padding.eq(0), f64::NEG_INFINITY);
    }
    let weights = scores.softmax(-1, Kind::Float);
    (weights.bmm(&v), weights)
}
