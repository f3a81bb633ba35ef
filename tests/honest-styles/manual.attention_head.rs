//! The softmax written out (exponentials over their row's sum, after subtracting the row's largest score)
//! and the projections applied with `matmul` on their weights.
use tch::{Kind, Tensor};

pub use transformer_anatomy::exercises::support::Projections;

fn project(x: &Tensor, linear: &tch::nn::Linear) -> Tensor {
    let y = x.matmul(&linear.ws.tr());
    match &linear.bs {
        Some(b) => y + b,
        None => y,
    }
}

pub fn attention_head(hidden_state: &Tensor, projections: &Projections) -> Tensor {
    let q = project(hidden_state, &projections.query);
    let k = project(hidden_state, &projections.key);
    let v = project(hidden_state, &projections.value);
    let d = q.size()[2] as f64;
    let scores = q.matmul(&k.transpose(-1, -2)) / d.sqrt(); // [batch, seq, seq]
    let shifted = &scores - scores.amax(-1, true);
    let e = shifted.exp();
    let weights = &e / e.sum_dim_intlist(-1, true, Kind::Float);
    weights.matmul(&v)
}
