//! Reference solution (see `exercises/attention_head.rs` for the task).
use tch::nn::Module;
use tch::{Kind, Tensor};

pub use transformer_anatomy::exercises::support::Projections;

pub fn attention_head(hidden_state: &Tensor, projections: &Projections) -> Tensor {
    let q = projections.query.forward(hidden_state); // [batch, seq, head_dim]
    let k = projections.key.forward(hidden_state);
    let v = projections.value.forward(hidden_state);
    let head_dim = *q.size().last().expect("a last axis") as f64;
    let weights = (q.bmm(&k.transpose(1, 2)) / head_dim.sqrt()).softmax(-1, Kind::Float); // [batch, seq, seq]
    weights.bmm(&v)
}
