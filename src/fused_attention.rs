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
#[derive(Debug)]
pub struct FusedMultiHeadAttention {
    pub query: nn::Linear,
    pub key: nn::Linear,
    pub value: nn::Linear,
    pub output: nn::Linear,
    pub num_heads: i64,
    pub head_dim: i64,
    dropout: f64,
}

impl FusedMultiHeadAttention {
    /// `config` is a [`BertConfig`](crate::BertConfig) or a [`LayerConfig`]: only the sizes of one
    /// layer are used.
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: impl Into<LayerConfig>) -> Self {
        let (p, config) = (p.borrow(), config.into());
        let h = config.hidden_size;
        let self_path = p / "self";
        FusedMultiHeadAttention {
            query: init::linear(&self_path / "query", h, h),
            key: init::linear(&self_path / "key", h, h),
            value: init::linear(&self_path / "value", h, h),
            output: init::linear(p / "output" / "dense", h, h),
            num_heads: config.num_attention_heads,
            head_dim: config.head_dim(),
            dropout: config.attention_probs_dropout_prob,
        }
    }

    /// Cuts the last axis into heads: `[batch, seq, hidden]` → `[batch, heads, seq, head_dim]`.
    pub fn split_heads(&self, t: &Tensor) -> Tensor {
        let (batch, seq) = (t.size()[0], t.size()[1]);
        t.view([batch, seq, self.num_heads, self.head_dim]).transpose(1, 2)
    }

    /// The keys and values of every head for `key_value_input` `[batch, s_k, hidden]`, each
    /// `[batch, heads, s_k, head_dim]`. A decoder computes the encoder's once and keeps them.
    pub fn keys_and_values(&self, key_value_input: &Tensor) -> (Tensor, Tensor) {
        (self.split_heads(&self.key.forward(key_value_input)), self.split_heads(&self.value.forward(key_value_input)))
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
        if !pass.weights && (!pass.train || self.dropout == 0.0) {
            // libtorch reads a boolean mask as "true = may attend", as ours does; a query that may see
            // nothing gets a zero context, as in `masked_attention_weights`.
            let mask = mask.map(|m| with_head_axis(&m.ne(0)));
            let context = Tensor::scaled_dot_product_attention(&q, keys, values, mask, 0.0, false, None, false);
            return AttentionOutput { output: self.merge_heads(&context), weights: None };
        }
        let mask = mask.map(with_head_axis);
        let (context, weights) = attention_with_dropout(&q, keys, values, mask.as_ref(), self.dropout, pass.train);
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
    /// One projection per role for all heads at once, a reshape that splits the heads apart, attention
    /// in every head at once (`[batch, heads, s_q, s_k]` scores), and the heads merged again.
    fn forward(
        &self,
        query_input: &Tensor,
        key_value_input: &Tensor,
        mask: Option<&Tensor>,
        pass: Pass,
    ) -> AttentionOutput {
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
