//! Reference solution (see `exercises/cross_attention.rs` for the task).
use tch::nn::Module;
use tch::Tensor;

pub use transformer_anatomy::exercises::support::Projections;

pub fn cross_attention(
    decoder_states: &Tensor,
    encoder_output: &Tensor,
    projections: &Projections,
    source_padding: Option<&Tensor>,
) -> (Tensor, Tensor) {
    let q = projections.query.forward(decoder_states); // [batch, t, head_dim]
    let k = projections.key.forward(encoder_output); // [batch, s, head_dim]
    let v = projections.value.forward(encoder_output); // [batch, s, head_dim]
    let head_dim = *q.size().last().unwrap() as f64;
    let mut scores = q.bmm(&k.transpose(1, 2)) / head_dim.sqrt(); // [batch, t, s]
    if let Some(padding) = source_padding {
        // [batch, s] → [batch, 1, s]: the same source positions hidden from every target.
        scores = scores.masked_fill(&padding.eq(0).unsqueeze(1), f64::NEG_INFINITY);
    }
    let weights = scores.softmax(-1, scores.kind());
    (weights.bmm(&v), weights)
}
