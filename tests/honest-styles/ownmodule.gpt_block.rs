//! A GPT block whose attention lives in a private module of the student's own, `heads`, which defines its
//! own `scaled_dot_product_attention` (the masked softmax of the scores, written out): called as
//! `heads::scaled_dot_product_attention`, it is this file's function, reached through this file's module,
//! not libtorch's finished attention. Its unit test calls it through `super::heads::…`.
use tch::nn::Module;
use tch::{Kind, Tensor};

pub use transformer_anatomy::exercises::support::GptBlockParts;

/// The attention's steps, each over `[batch, heads, t, head_dim]`.
mod heads {
    use tch::{Kind, Tensor};

    /// `[batch, t, d_model]` → `[batch, heads, t, d_model / heads]`.
    pub fn split(y: &Tensor, heads: i64) -> Tensor {
        let (batch, t, d_model) = y.size3().expect("[batch, t, d_model]");
        y.view([batch, t, heads, d_model / heads]).transpose(1, 2)
    }

    /// `[batch, heads, t, head_dim]` → `[batch, t, heads * head_dim]`.
    pub fn merge(y: &Tensor) -> Tensor {
        let (batch, heads, t, head_dim) = y.size4().expect("[batch, heads, t, head_dim]");
        y.transpose(1, 2).contiguous().view([batch, t, heads * head_dim])
    }

    /// softmax(q kᵀ / √head_dim, −∞ where `future` is true) v.
    #[must_use]
    pub fn scaled_dot_product_attention(q: &Tensor, k: &Tensor, v: &Tensor, future: &Tensor) -> Tensor {
        let head_dim = *q.size().last().expect("a last axis") as f64;
        let scores = q.matmul(&k.transpose(-2, -1)) / head_dim.sqrt(); // [batch, heads, t, t]
        scores.masked_fill(future, f64::NEG_INFINITY).softmax(-1, Kind::Float).matmul(v)
    }
}

use self::heads::{merge, split};

pub fn gpt_block(x: &Tensor, parts: &GptBlockParts) -> Tensor {
    let t = x.size()[1];
    let h = parts.norm_1.forward(x);
    let (q, k, v) = (
        split(&parts.query.forward(&h), parts.heads),
        split(&parts.key.forward(&h), parts.heads),
        split(&parts.value.forward(&h), parts.heads),
    );
    let future = Tensor::ones([t, t], (Kind::Bool, x.device())).triu(1);
    let context = merge(&heads::scaled_dot_product_attention(&q, &k, &v, &future));
    let x = x + parts.output.forward(&context);
    &x + parts.feed_forward.forward(&parts.norm_2.forward(&x))
}

#[cfg(test)]
mod tests {
    use tch::{Device, Kind, Tensor};

    #[test]
    fn the_first_position_attends_to_itself_alone() {
        let q = Tensor::randn([1, 1, 3, 2], (Kind::Float, Device::Cpu));
        let future = Tensor::ones([3, 3], (Kind::Bool, Device::Cpu)).triu(1);
        let out = super::heads::scaled_dot_product_attention(&q, &q, &q, &future);
        assert!(out.get(0).get(0).get(0).allclose(&q.get(0).get(0).get(0), 1e-6, 1e-6, false));
    }
}
