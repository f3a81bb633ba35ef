//! expect: uses the learner's crate `transformer_anatomy` here
//! Writes the crate's finished mask and softmax by their full paths, with no `use` to look for.
use tch::{Device, Tensor};

pub fn causal_mask(n: i64, device: Device) -> Tensor {
    transformer_anatomy::masks::causal_mask(n, device)
}

pub fn masked_softmax(scores: &Tensor, mask: &Tensor) -> Tensor {
    transformer_anatomy::masked_attention_weights(scores, mask)
}
