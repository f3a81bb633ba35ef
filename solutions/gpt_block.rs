//! Reference solution (see `exercises/gpt_block.rs` for the task).
use tch::nn::Module;
use tch::{Kind, Tensor};

pub use transformer_anatomy::exercises::support::GptBlockParts;

pub fn gpt_block(x: &Tensor, parts: &GptBlockParts) -> Tensor {
    let (batch, t, d_model) = x.size3().unwrap();
    let head_dim = d_model / parts.heads;
    let h = parts.norm_1.forward(x);
    let split = |y: Tensor| y.view([batch, t, parts.heads, head_dim]).transpose(1, 2); // [batch, heads, t, head_dim]
    let (q, k, v) = (split(parts.query.forward(&h)), split(parts.key.forward(&h)), split(parts.value.forward(&h)));
    let scores = q.matmul(&k.transpose(-2, -1)) / (head_dim as f64).sqrt(); // [batch, heads, t, t]
    let future = Tensor::ones([t, t], (Kind::Bool, x.device())).triu(1);
    let weights = scores.masked_fill(&future, f64::NEG_INFINITY).softmax(-1, Kind::Float);
    let context = weights.matmul(&v).transpose(1, 2).contiguous().view([batch, t, d_model]);
    let x = x + parts.output.forward(&context);
    &x + parts.feed_forward.forward(&parts.norm_2.forward(&x))
}
