//! expect: uses `f_scaled_dot_product_attention`, libtorch's finished attention
//! Writes the block around libtorch's fused causal attention, in its fallible form.
use tch::nn::Module;
use tch::Tensor;

pub use transformer_anatomy::exercises::support::GptBlockParts;

pub fn gpt_block(x: &Tensor, parts: &GptBlockParts) -> Tensor {
    let (b, t, d) = x.size3().unwrap();
    let hd = d / parts.heads;
    let h = parts.norm_1.forward(x);
    let split = |y: Tensor| y.view([b, t, parts.heads, hd]).transpose(1, 2);
    let (q, k, v) = (split(parts.query.forward(&h)), split(parts.key.forward(&h)), split(parts.value.forward(&h)));
    let a = q.f_scaled_dot_product_attention::<Tensor>(&k, &v, None, 0.0, true, None, false).unwrap();
    let x = x + parts.output.forward(&a.transpose(1, 2).reshape([b, t, d]));
    &x + parts.feed_forward.forward(&parts.norm_2.forward(&x))
}
