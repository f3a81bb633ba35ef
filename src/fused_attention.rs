//! # Step 8c: multi-head attention, the fast way
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

use crate::config::BertConfig;
use crate::scaled_dot_product::attention_with_dropout;

/// Multi-head self-attention with fused projections, named as in Hugging Face BERT: under a layer's
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
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &BertConfig) -> Self {
        let p = p.borrow();
        let h = config.hidden_size;
        let cfg = Default::default();
        let self_path = p / "self";
        FusedMultiHeadAttention {
            query: nn::linear(&self_path / "query", h, h, cfg),
            key: nn::linear(&self_path / "key", h, h, cfg),
            value: nn::linear(&self_path / "value", h, h, cfg),
            output: nn::linear(p / "output" / "dense", h, h, cfg),
            num_heads: config.num_attention_heads,
            head_dim: config.head_dim(),
            dropout: config.attention_probs_dropout_prob,
        }
    }

    /// `[batch, seq, hidden]` → `[batch, heads, seq, head_dim]`.
    fn split_heads(&self, x: &Tensor) -> Tensor {
        let (batch, seq) = (x.size()[0], x.size()[1]);
        x.view([batch, seq, self.num_heads, self.head_dim]).transpose(1, 2)
    }

    /// Returns the output `[batch, seq, hidden]` and the weights `[batch, heads, seq, seq]`. `mask`
    /// (0 = blocked) is given as for the per-head version, broadcasting against `[batch, seq, seq]`.
    pub fn forward_with_weights(&self, hidden_state: &Tensor, mask: Option<&Tensor>, train: bool) -> (Tensor, Tensor) {
        let (batch, seq, hidden) = hidden_state.size3().expect("hidden states must be [batch, seq, hidden]");
        let q = self.split_heads(&self.query.forward(hidden_state)); // [batch, heads, seq, head_dim]
        let k = self.split_heads(&self.key.forward(hidden_state));
        let v = self.split_heads(&self.value.forward(hidden_state));
        // A 3-D mask [batch, s_q, s_k] gets a head axis so that it broadcasts over the heads.
        let mask = mask.map(|m| if m.dim() == 3 { m.unsqueeze(1) } else { m.shallow_clone() });
        let (context, weights) = attention_with_dropout(&q, &k, &v, mask.as_ref(), self.dropout, train);
        let merged = context.transpose(1, 2).contiguous().view([batch, seq, hidden]); // [batch, seq, hidden]
        (self.output.forward(&merged), weights)
    }

    pub fn forward(&self, hidden_state: &Tensor, mask: Option<&Tensor>, train: bool) -> Tensor {
        self.forward_with_weights(hidden_state, mask, train).0
    }

    /// The same block with libtorch's fused `scaled_dot_product_attention` kernel in place of the
    /// chapter's step-by-step attention (eval mode). Used as an independent check and as the speed
    /// reference in `anatomy bench`.
    pub fn forward_libtorch(&self, hidden_state: &Tensor, mask: Option<&Tensor>) -> Tensor {
        let (batch, seq, hidden) = hidden_state.size3().expect("hidden states must be [batch, seq, hidden]");
        let q = self.split_heads(&self.query.forward(hidden_state)); // [batch, heads, seq, head_dim]
        let k = self.split_heads(&self.key.forward(hidden_state));
        let v = self.split_heads(&self.value.forward(hidden_state));
        // libtorch reads a boolean mask as "true = may attend", the same convention as ours.
        let mask = mask.map(|m| {
            let m = m.ne(0);
            if m.dim() == 3 { m.unsqueeze(1) } else { m }
        });
        let context = Tensor::scaled_dot_product_attention(&q, &k, &v, mask, 0.0, false, None, false);
        let merged = context.transpose(1, 2).contiguous().view([batch, seq, hidden]);
        self.output.forward(&merged)
    }
}

impl nn::ModuleT for FusedMultiHeadAttention {
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        self.forward(xs, None, train)
    }
}
