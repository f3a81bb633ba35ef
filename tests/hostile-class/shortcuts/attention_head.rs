//! expect: imports `transformer_anatomy::scaled_dot_product::attention_with_weights`
//! Writes the three projections, then imports the crate's finished attention under another name.
use tch::nn::Module;
use tch::Tensor;

pub use transformer_anatomy::exercises::support::Projections;
use transformer_anatomy::scaled_dot_product::attention_with_weights as attend_all;

pub fn attention_head(hidden_states: &Tensor, projections: &Projections) -> (Tensor, Tensor) {
    let q = projections.query.forward(hidden_states);
    let k = projections.key.forward(hidden_states);
    let v = projections.value.forward(hidden_states);
    attend_all(&q, &k, &v, None)
}
