//! Reference solution for exercise 3 (see `exercises/decoder_layer.rs` for the task).
use tch::nn::{Module, ModuleT};
use tch::Tensor;

pub use crate::exercises::support::DecoderLayerParts;

pub fn decoder_layer(
    x: &Tensor,
    memory: &Tensor,
    parts: &DecoderLayerParts,
    target_mask: &Tensor,
    source_mask: Option<&Tensor>,
) -> Tensor {
    let x = x + parts.self_attention.forward(&parts.norm_1.forward(x), Some(target_mask), false);
    let x = &x + parts.cross_attention.forward_cross(&parts.norm_2.forward(&x), memory, source_mask, false);
    &x + parts.feed_forward.forward_t(&parts.norm_3.forward(&x), false)
}
