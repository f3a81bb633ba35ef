//! A plausible wrong answer to `gpt_block`; the grader must fail it.
//! expect: takes a boolean mask
//! mistake: unnamed
use tch::nn::Module;
use tch::{Kind, Tensor};
pub use transformer_anatomy::exercises::support::GptBlockParts;

pub fn gpt_block(x: &Tensor, p: &GptBlockParts) -> Tensor {
    let (b, t, d) = x.size3().unwrap();
    let hd = d / p.heads;
    let attend = |h: &Tensor| {
        let split = |y: Tensor| y.view([b, t, p.heads, hd]).transpose(1, 2);
        let (q, k, v) = (split(p.query.forward(h)), split(p.key.forward(h)), split(p.value.forward(h)));
        let scores = q.matmul(&k.transpose(-2, -1)) / (hd as f64).sqrt();
        // The future as a 0/1 matrix of numbers, the way the chapter draws it.
        let future = Tensor::ones([t, t], (Kind::Float, x.device())).triu(1);
        let weights = scores.masked_fill(&future, f64::NEG_INFINITY).softmax(-1, Kind::Float);
        p.output.forward(&weights.matmul(&v).transpose(1, 2).contiguous().view([b, t, d]))
    };
    let x = x + attend(&p.norm_1.forward(x));
    &x + p.feed_forward.forward(&p.norm_2.forward(&x))
}
