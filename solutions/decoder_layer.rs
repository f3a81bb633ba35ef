//! Reference solution (see `exercises/decoder_layer.rs` for the task).
use tch::nn::Module;
use tch::Tensor;

use transformer_anatomy::{Attention, Pass};

pub use transformer_anatomy::exercises::support::DecoderLayerParts;

pub fn decoder_layer(
    x: &Tensor,
    memory: &Tensor,
    parts: &DecoderLayerParts,
    target_mask: &Tensor,
    source_mask: Option<&Tensor>,
) -> Tensor {
    let h = parts.norm_1.forward(x);
    let x = x + parts.self_attention.forward(&h, &h, Some(target_mask), Pass::EVAL).output;
    let x = &x + parts.cross_attention.forward(&parts.norm_2.forward(&x), memory, source_mask, Pass::EVAL).output;
    &x + parts.feed_forward.forward(&parts.norm_3.forward(&x))
}
