//! # Multi-head attention, the fast way (`chapters/03-multi-head-attention.md`, *The same layer, fused*)
//!
//! Running twelve small heads one after another means 36 small matrix products. Since every head reads
//! the same input, their query projections can be stacked into one `hidden × hidden` matrix (likewise
//! keys and values): one product per projection, then a reshape splits the result into heads. This is
//! how Hugging Face BERT stores and runs attention, so its checkpoints load here directly; the tests
//! show it gives the same numbers as the chapter's per-head [`MultiHeadAttention`](crate::MultiHeadAttention).
//!
//! Chapter section: [`chapters/03-multi-head-attention.md`](../chapters/03-multi-head-attention.md) ·
//! notebook `notebooks/03-multi-head-attention.ipynb`.
use std::borrow::Borrow;

use tch::nn::{self, Module};
use tch::Tensor;

use crate::attention::{Attention, AttentionOutput, Pass};
use crate::config::LayerConfig;
use crate::init;
use crate::scaled_dot_product::attention_with_dropout;

/// Multi-head attention with fused projections, named as in Hugging Face BERT: under a layer's
/// `attention` path, `self.query`, `self.key`, `self.value` and `output.dense`.
///
/// The three input projections also share one `[3 × hidden, hidden]` matrix (and one bias): `query`,
/// `key` and `value` are its three blocks of rows, views of the same memory, so that loading a checkpoint
/// or an optimiser's step on one of them changes the shared matrix too. Where no gradient is wanted
/// (evaluation, decoding), self-attention runs all three in one product with it, as PyTorch's
/// `nn.MultiheadAttention` and nanoGPT do; while training, each projection is its own product, so that
/// each parameter gets its gradient.
#[derive(Debug)]
pub struct FusedMultiHeadAttention {
    pub query: nn::Linear,
    pub key: nn::Linear,
    pub value: nn::Linear,
    pub output: nn::Linear,
    pub num_heads: i64,
    pub head_dim: i64,
    dropout: f64,
    /// `[3 × hidden, hidden]` and `[3 × hidden]`: the rows of `query`, `key` and `value`, in that order.
    packed: nn::Linear,
}

impl FusedMultiHeadAttention {
    /// The projections of one layer's `config` (for a BERT model,
    /// [`BertConfig::layer`](crate::BertConfig::layer)); only its sizes and attention dropout are used.
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &LayerConfig) -> Self {
        let p = p.borrow();
        let h = config.hidden_size;
        let self_path = p / "self";
        let kind = (p.kind(), p.device());
        let packed = nn::Linear { ws: Tensor::zeros([3 * h, h], kind), bs: Some(Tensor::zeros([3 * h], kind)) };
        // Each projection is a block of the packed rows, registered under Hugging Face's names. `detach`
        // makes each block a parameter of its own (a leaf for autograd) that still shares the memory.
        let [query, key, value] = [0i64, 1, 2].map(|i| {
            let path = &self_path / ["query", "key", "value"][i as usize];
            let rows = |t: &Tensor| t.narrow(0, i * h, h).detach();
            let ws = path.add("weight", rows(&packed.ws), true);
            let mut layer = nn::Linear { ws, bs: packed.bs.as_ref().map(|b| path.add("bias", rows(b), true)) };
            init::fill_linear(&mut layer, h); // weight, then bias: the order `init::linear` draws in
            layer
        });
        FusedMultiHeadAttention {
            query,
            key,
            value,
            output: init::linear(p / "output" / "dense", h, h),
            num_heads: config.num_attention_heads,
            head_dim: config.head_dim(),
            dropout: config.attention_probs_dropout_prob,
            packed,
        }
    }

    /// Cuts the last axis into heads: `[batch, seq, hidden]` → `[batch, heads, seq, head_dim]`.
    pub fn split_heads(&self, t: &Tensor) -> Tensor {
        let (batch, seq) = (t.size()[0], t.size()[1]);
        t.view([batch, seq, self.num_heads, self.head_dim]).transpose(1, 2)
    }

    /// Whether a product with the packed matrix may stand for the three projections: nobody wants a
    /// gradient of them, and they are still blocks of it (moving a `VarStore` to another device or kind
    /// gives each parameter memory of its own; then the three products run as written).
    fn packed_usable(&self) -> bool {
        let wants_gradient = self.query.ws.requires_grad() && crate::inference_mode::grad_enabled();
        !wants_gradient && self.shares_packed_memory()
    }

    fn shares_packed_memory(&self) -> bool {
        let (ws, bs) = (&self.packed.ws, self.packed.bs.as_ref().expect("the packed projection has a bias"));
        let block = self.query.ws.numel() * ws.kind().elt_size_in_bytes();
        let row = self.query.ws.size()[0] as usize * bs.kind().elt_size_in_bytes();
        [&self.query, &self.key, &self.value].iter().enumerate().all(|(i, layer)| {
            let bias = layer.bs.as_ref().map(|b| b.data_ptr() as usize);
            layer.ws.data_ptr() as usize == ws.data_ptr() as usize + i * block
                && bias == Some(bs.data_ptr() as usize + i * row)
        })
    }

    /// The queries, keys and values of every head for self-attention over `x` `[batch, seq, hidden]`,
    /// each `[batch, heads, seq, head_dim]`: one product with the packed matrix where it may stand for
    /// the three.
    pub fn queries_keys_values(&self, x: &Tensor) -> (Tensor, Tensor, Tensor) {
        if !self.packed_usable() {
            let (keys, values) = self.keys_and_values(x);
            return (self.split_heads(&self.query.forward(x)), keys, values);
        }
        let (batch, seq) = (x.size()[0], x.size()[1]);
        let qkv = self.packed.forward(x).view([batch, seq, 3, self.num_heads, self.head_dim]); // [b, s, 3, heads, d]
        match &qkv.permute([2, 0, 3, 1, 4]).unbind(0)[..] {
            [q, k, v] => (q.shallow_clone(), k.shallow_clone(), v.shallow_clone()), // [batch, heads, seq, head_dim]
            _ => unreachable!("unbind of an axis of 3 gives 3 tensors"),
        }
    }

    /// The keys and values of every head for `key_value_input` `[batch, s_k, hidden]`, each
    /// `[batch, heads, s_k, head_dim]`. A decoder computes the encoder's once and keeps them.
    pub fn keys_and_values(&self, key_value_input: &Tensor) -> (Tensor, Tensor) {
        if !self.packed_usable() {
            let (k, v) = (self.key.forward(key_value_input), self.value.forward(key_value_input));
            return (self.split_heads(&k), self.split_heads(&v));
        }
        let h = self.num_heads * self.head_dim;
        let (ws, bs) = (self.packed.ws.narrow(0, h, 2 * h), self.packed.bs.as_ref().map(|b| b.narrow(0, h, 2 * h)));
        let (batch, seq) = (key_value_input.size()[0], key_value_input.size()[1]);
        let kv = key_value_input.linear(&ws, bs.as_ref()).view([batch, seq, 2, self.num_heads, self.head_dim]);
        let (k, v) = (kv.select(2, 0), kv.select(2, 1)); // [batch, seq, heads, head_dim] each
        (k.transpose(1, 2), v.transpose(1, 2))
    }

    /// Attention of `query_input` `[batch, s_q, hidden]` over keys and values already split into heads
    /// (`[batch, heads, s_k, head_dim]`, from [`FusedMultiHeadAttention::keys_and_values`], perhaps
    /// gathered step by step in a decoder's cache). [`Attention::forward`] is this with fresh keys and
    /// values.
    ///
    /// When the pass does not ask for the weights and has no dropout to apply to them (evaluation, or
    /// training with a dropout rate of 0, as chapter 11's GPT trains), nobody will look at the
    /// `[s_q, s_k]` weights, so libtorch's fused `scaled_dot_product_attention` kernel computes the same
    /// context in one call instead of the chapter's five (scores, scale, mask, softmax, weighted sum), and
    /// its backward pass in one more. Hugging Face's BERT ("sdpa" attention), nanoGPT and PyTorch's
    /// `nn.MultiheadAttention` make the same choice; the tests check that both ways give the same
    /// numbers, masked rows and gradients included.
    pub fn attention_over(
        &self,
        query_input: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        mask: Option<&Tensor>,
        pass: Pass,
    ) -> AttentionOutput {
        let q = self.split_heads(&self.query.forward(query_input)); // [batch, heads, s_q, head_dim]
        self.attend_heads(&q, keys, values, mask, pass)
    }

    /// [`FusedMultiHeadAttention::attention_over`] for queries already split into heads
    /// (`[batch, heads, s_q, head_dim]`, from [`FusedMultiHeadAttention::queries_keys_values`]).
    pub fn attend_heads(
        &self,
        q: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        mask: Option<&Tensor>,
        pass: Pass,
    ) -> AttentionOutput {
        if !pass.weights && (!pass.train || self.dropout == 0.0) {
            // libtorch reads a boolean mask as "true = may attend", as ours does; a query that may see
            // nothing gets a zero context, as in `masked_attention_weights`.
            let mask = mask.map(|m| with_head_axis(&m.ne(0)));
            let context = Tensor::scaled_dot_product_attention(q, keys, values, mask, 0.0, false, None, false);
            return AttentionOutput { output: self.merge_heads(&context), weights: None };
        }
        let mask = mask.map(with_head_axis);
        let (context, weights) = attention_with_dropout(q, keys, values, mask.as_ref(), self.dropout, pass.train);
        AttentionOutput { output: self.merge_heads(&context), weights: pass.weights.then_some(weights) }
    }

    /// Puts the heads side by side again and applies the output projection:
    /// `[batch, heads, s_q, head_dim]` → `[batch, s_q, hidden]`.
    fn merge_heads(&self, context: &Tensor) -> Tensor {
        let (batch, seq) = (context.size()[0], context.size()[2]);
        let merged = context.transpose(1, 2).contiguous().view([batch, seq, self.num_heads * self.head_dim]); // [batch, s_q, hidden]
        self.output.forward(&merged)
    }
}

impl Attention for FusedMultiHeadAttention {
    /// One projection per role for all heads at once (one for all three roles in self-attention without
    /// gradients), a reshape that splits the heads apart, attention in every head at once
    /// (`[batch, heads, s_q, s_k]` scores), and the heads merged again.
    fn forward(
        &self,
        query_input: &Tensor,
        key_value_input: &Tensor,
        mask: Option<&Tensor>,
        pass: Pass,
    ) -> AttentionOutput {
        if std::ptr::eq(query_input, key_value_input) {
            let (q, keys, values) = self.queries_keys_values(query_input); // [batch, heads, seq, head_dim] each
            return self.attend_heads(&q, &keys, &values, mask, pass);
        }
        let (keys, values) = self.keys_and_values(key_value_input); // [batch, heads, s_k, head_dim] each
        self.attention_over(query_input, &keys, &values, mask, pass)
    }

    fn hidden_size(&self) -> i64 {
        self.output.ws.size()[0]
    }

    fn num_heads(&self) -> i64 {
        self.num_heads
    }
}

/// A 3-D mask `[batch, s_q, s_k]` gets a head axis, `[batch, 1, s_q, s_k]`, so that it broadcasts over the
/// heads; a 2-D `[s_q, s_k]` mask broadcasts as it is.
fn with_head_axis(mask: &Tensor) -> Tensor {
    if mask.dim() == 3 {
        mask.unsqueeze(1)
    } else {
        mask.shallow_clone()
    }
}

impl nn::ModuleT for FusedMultiHeadAttention {
    /// Self-attention without a mask.
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        Attention::forward(self, xs, xs, None, train.into()).output
    }
}

#[cfg(test)]
mod tests {
    use tch::{nn, Device, Kind, Tensor};

    use super::*;
    use crate::{BertConfig, EncoderOptions};

    fn attention() -> (nn::VarStore, FusedMultiHeadAttention, Tensor) {
        tch::manual_seed(3);
        let vs = nn::VarStore::new(Device::Cpu);
        let config = BertConfig::tiny(EncoderOptions::bert()).layer();
        let fused = FusedMultiHeadAttention::new(vs.root(), &config);
        let x = Tensor::randn([2, 5, config.hidden_size], (Kind::Float, Device::Cpu));
        (vs, fused, x)
    }

    /// The packed product stands for the three only where no gradient is wanted, and gives their numbers,
    /// with and without the weights and a mask.
    #[test]
    fn the_packed_product_gives_the_three_projections_numbers() {
        let (_vs, fused, x) = attention();
        assert!(!fused.packed_usable(), "with gradients on, each projection is its own product");
        let mask = crate::causal_mask(5, Device::Cpu);
        for (mask, pass) in [(None, Pass::EVAL), (Some(&mask), Pass::EVAL), (Some(&mask), Pass::WEIGHTS)] {
            let three = Attention::forward(&fused, &x, &x, mask, pass).output;
            let packed = tch::no_grad(|| {
                assert!(fused.packed_usable());
                Attention::forward(&fused, &x, &x, mask, pass).output
            });
            assert!(packed.allclose(&three, 1e-6, 1e-6, false), "{pass:?}");
        }
        let (keys, values) = fused.keys_and_values(&x);
        let (packed_keys, packed_values) = tch::no_grad(|| fused.keys_and_values(&x));
        assert!(packed_keys.allclose(&keys, 1e-6, 1e-6, false) && packed_values.allclose(&values, 1e-6, 1e-6, false));
    }

    /// Chapter 03's cell on `.contiguous()`, as it is written there: a view of the transposed heads is
    /// refused, which is why `merge_heads` copies first, and after the copy the merge gives the input back.
    #[test]
    fn a_view_of_transposed_heads_is_refused_until_they_are_made_contiguous() {
        let x = Tensor::arange(3840, (Kind::Float, Device::Cpu)).view([1, 5, 768]);
        let heads = x.view([1, 5, 12, 64]).transpose(1, 2); // [1, 12, 5, 64]: no number moved
        assert!(!heads.is_contiguous());
        let context = heads.contiguous();
        let back = context.transpose(1, 2); // [1, 5, 12, 64], strides of a [1, 12, 5, 64] tensor
        assert!(back.f_view([1, 5, 768]).is_err());
        let merged = back.contiguous().view([1, 5, 768]);
        assert!(merged.equal(&x));
    }

    /// Loading a checkpoint or an optimiser's step changes `query`, `key` and `value` in place, and the
    /// packed matrix with them; moving the parameters elsewhere ends the sharing, and then the three
    /// products run again.
    #[test]
    fn a_change_to_a_projection_reaches_the_packed_product_and_a_move_ends_the_sharing() {
        let (mut vs, mut fused, x) = attention();
        tch::no_grad(|| {
            fused.value.ws.copy_(&(Tensor::randn(fused.value.ws.size(), (Kind::Float, Device::Cpu)) * 3.0));
            let _ = fused.key.bs.as_mut().unwrap().fill_(0.5);
        });
        let three = tch::with_grad(|| Attention::forward(&fused, &x, &x, None, Pass::EVAL).output);
        let packed = tch::no_grad(|| Attention::forward(&fused, &x, &x, None, Pass::EVAL).output);
        assert!(packed.allclose(&three, 1e-5, 1e-5, false));
        vs.double();
        let x = x.to_kind(Kind::Double);
        tch::no_grad(|| {
            assert!(!fused.packed_usable(), "set_kind gave each parameter memory of its own");
            let moved = Attention::forward(&fused, &x, &x, None, Pass::EVAL).output;
            assert!(moved.to_kind(Kind::Float).allclose(&three, 1e-5, 1e-5, false));
        });
    }
}
