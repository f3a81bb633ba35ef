//! A plausible wrong answer to `decoder_layer`; the grader must fail it.
//! expect: does not depend on the encoder output
use tch::nn::Module;
use tch::Tensor;
pub use transformer_anatomy::exercises::support::DecoderLayerParts;
use transformer_anatomy::{Attention, Pass};

pub fn decoder_layer(x: &Tensor, memory: &Tensor, p: &DecoderLayerParts, t: &Tensor, s: Option<&Tensor>) -> Tensor {
    let h = p.norm_1.forward(x);
    let x = x + p.self_attention.forward(&h, &h, Some(t), Pass::EVAL).output;
    let _ = (memory, s);
    &x + p.feed_forward.forward(&p.norm_3.forward(&x))
}
