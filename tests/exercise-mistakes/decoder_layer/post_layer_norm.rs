//! A plausible wrong answer to `decoder_layer`; the grader must fail it.
//! expect: post-layer-norm arrangement
use tch::nn::Module;
use tch::Tensor;
pub use transformer_anatomy::exercises::support::DecoderLayerParts;
use transformer_anatomy::{Attention, Pass};

pub fn decoder_layer(x: &Tensor, memory: &Tensor, p: &DecoderLayerParts, t: &Tensor, s: Option<&Tensor>) -> Tensor {
    let x = p.norm_1.forward(&(x + p.self_attention.forward(x, x, Some(t), Pass::EVAL).output));
    let x = p.norm_2.forward(&(&x + p.cross_attention.forward(&x, memory, s, Pass::EVAL).output));
    p.norm_3.forward(&(&x + p.feed_forward.forward(&x)))
}
