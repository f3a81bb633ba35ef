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

    /// One projection per role for all heads at once, then a reshape that splits the heads apart:
    /// queries from `query_input` `[batch, s_q, hidden]`, keys and values from `key_value_input`
    /// `[batch, s_k, hidden]`, each returned as `[batch, heads, s, head_dim]`.
    fn project_heads(&self, query_input: &Tensor, key_value_input: &Tensor) -> (Tensor, Tensor, Tensor) {
        let split = |t: Tensor| {
            let (batch, seq, _) = t.size3().expect("hidden states must be [batch, seq, hidden]");
            t.view([batch, seq, self.num_heads, self.head_dim]).transpose(1, 2)
        };
        (
            split(self.query.forward(query_input)),
            split(self.key.forward(key_value_input)),
            split(self.value.forward(key_value_input)),
        )
    }

    /// Puts the heads side by side again and applies the output projection:
    /// `[batch, heads, seq, head_dim]` → `[batch, seq, hidden]`.
    fn merge_heads(&self, context: &Tensor) -> Tensor {
        let (batch, _, seq, _) = context.size4().expect("[batch, heads, seq, head_dim]");
        let merged = context.transpose(1, 2).contiguous().view([batch, seq, self.num_heads * self.head_dim]);
        self.output.forward(&merged)
    }

    /// Returns the output `[batch, seq, hidden]` and the weights `[batch, heads, seq, seq]`. `mask`
    /// (0 = blocked) is given as for the per-head version, broadcasting against `[batch, seq, seq]`.
    pub fn forward_with_weights(&self, hidden_state: &Tensor, mask: Option<&Tensor>, train: bool) -> (Tensor, Tensor) {
        self.forward_cross_with_weights(hidden_state, hidden_state, mask, train)
    }

    pub fn forward(&self, hidden_state: &Tensor, mask: Option<&Tensor>, train: bool) -> Tensor {
        self.forward_with_weights(hidden_state, mask, train).0
    }

    /// Encoder-decoder attention: queries from `query_input` `[batch, s_q, hidden]`, keys and values from
    /// `key_value_input` `[batch, s_k, hidden]`. Returns `[batch, s_q, hidden]` and the rectangular weights
    /// `[batch, heads, s_q, s_k]`; `mask` broadcasts against `[batch, s_q, s_k]`.
    pub fn forward_cross_with_weights(
        &self,
        query_input: &Tensor,
        key_value_input: &Tensor,
        mask: Option<&Tensor>,
        train: bool,
    ) -> (Tensor, Tensor) {
        let (q, k, v) = self.project_heads(query_input, key_value_input); // [batch, heads, s, head_dim] each
        let mask = mask.map(with_head_axis);
        let (context, weights) = attention_with_dropout(&q, &k, &v, mask.as_ref(), self.dropout, train);
        (self.merge_heads(&context), weights)
    }

    pub fn forward_cross(
        &self,
        query_input: &Tensor,
        key_value_input: &Tensor,
        mask: Option<&Tensor>,
        train: bool,
    ) -> Tensor {
        self.forward_cross_with_weights(query_input, key_value_input, mask, train).0
    }

    /// The same block with libtorch's fused `scaled_dot_product_attention` kernel in place of the
    /// chapter's step-by-step attention (eval mode). Used as an independent check and as the speed
    /// reference in `anatomy bench`.
    pub fn forward_libtorch(&self, hidden_state: &Tensor, mask: Option<&Tensor>) -> Tensor {
        let (q, k, v) = self.project_heads(hidden_state, hidden_state);
        // libtorch reads a boolean mask as "true = may attend", the same convention as ours.
        let mask = mask.map(|m| with_head_axis(&m.ne(0)));
        let context = Tensor::scaled_dot_product_attention(&q, &k, &v, mask, 0.0, false, None, false);
        self.merge_heads(&context)
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
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        self.forward(xs, None, train)
    }
}
