//! A plausible wrong answer to `decoder_layer`; the grader must fail it.
//! expect: x + sublayer(norm(x))
//! mistake: unnamed
use tch::nn::Module;
use tch::Tensor;
pub use transformer_anatomy::exercises::support::DecoderLayerParts;
use transformer_anatomy::{Attention, Pass};

pub fn decoder_layer(x: &Tensor, memory: &Tensor, p: &DecoderLayerParts, t: &Tensor, s: Option<&Tensor>) -> Tensor {
    // Normalised on the way in and again on the way out of each sub-layer.
    let h = p.norm_1.forward(x);
    let x = p.norm_1.forward(&(x + p.self_attention.forward(&h, &h, Some(t), Pass::EVAL).output));
    let x = &x + p.cross_attention.forward(&p.norm_2.forward(&x), memory, s, Pass::EVAL).output;
    &x + p.feed_forward.forward(&p.norm_3.forward(&x))
}
