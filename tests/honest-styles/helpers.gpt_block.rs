//! A GPT block built from helpers of the student's own, one named `masked_multi_head_attention`: it is
//! defined here, so calling it is calling this file's code, not libtorch's finished attention.
use tch::nn::Module;
use tch::{Device, Kind, Tensor};

pub use transformer_anatomy::exercises::support::GptBlockParts;

fn masked_multi_head_attention(h: &Tensor, parts: &GptBlockParts) -> Tensor {
    let (batch, t, d_model) = h.size3().expect("[batch, t, d_model]");
    let head_dim = d_model / parts.heads;
    let heads = |y: Tensor| y.reshape([batch, t, parts.heads, head_dim]).permute([0, 2, 1, 3]);
    let (q, k, v) = (heads(parts.query.forward(h)), heads(parts.key.forward(h)), heads(parts.value.forward(h)));
    let future = Tensor::ones([t, t], (Kind::Bool, Device::Cpu)).triu(1);
    let scores = q.matmul(&k.transpose(-2, -1)) / (head_dim as f64).sqrt();
    let weights = scores.masked_fill(&future, f64::NEG_INFINITY).softmax(-1, Kind::Float);
    let merged = weights.matmul(&v).permute([0, 2, 1, 3]).reshape([batch, t, d_model]);
    parts.output.forward(&merged)
}

pub fn gpt_block(x: &Tensor, parts: &GptBlockParts) -> Tensor {
    let x = x + masked_multi_head_attention(&parts.norm_1.forward(x), parts);
    &x + parts.feed_forward.forward(&parts.norm_2.forward(&x))
}
