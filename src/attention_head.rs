//! # One attention head (`chapters/03-multi-head-attention.md`)
//!
//! In the earlier steps queries, keys and values were all the raw embeddings. A real head first projects
//! each token vector three times, with three learned linear maps, into a smaller space of `head_dim`
//! numbers: the query says what this token looks for, the key what it offers, the value what it passes
//! on. Different heads learn different projections, and so can attend to different relations.
//!
//! Chapter section: [`chapters/03-multi-head-attention.md`](../chapters/03-multi-head-attention.md) ·
//! notebook `notebooks/03-multi-head-attention.ipynb`.
use std::borrow::Borrow;

use tch::nn::{self, Module};
use tch::Tensor;

use crate::attention::{AttentionOutput, Pass};
use crate::init;
use crate::scaled_dot_product::attention_with_dropout;

/// One head: three projections, then scaled dot-product attention.
///
/// Its parameters sit at `query`, `key` and `value` under the path it is given, as in Hugging Face BERT.
#[derive(Debug)]
pub struct AttentionHead {
    pub query: nn::Linear,
    pub key: nn::Linear,
    pub value: nn::Linear,
    dropout: f64,
}

impl AttentionHead {
    /// A head that maps `embed_dim` inputs to `head_dim` outputs. `dropout` drops attention weights while
    /// training, as BERT does (the chapter's listing has no dropout here; in eval mode it changes nothing).
    /// Unlike every other model part, it takes raw sizes rather than a configuration: it is the chapter's
    /// first step, written as the book writes `AttentionHead(embed_dim, head_dim)`, and
    /// [`MultiHeadAttention::new`](crate::MultiHeadAttention::new) reads the sizes from a `LayerConfig`.
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, embed_dim: i64, head_dim: i64, dropout: f64) -> Self {
        let p = p.borrow();
        AttentionHead {
            query: init::linear(p / "query", embed_dim, head_dim),
            key: init::linear(p / "key", embed_dim, head_dim),
            value: init::linear(p / "value", embed_dim, head_dim),
            dropout,
        }
    }

    /// Queries from `query_input` `[batch, s_q, embed_dim]`, keys and values from `key_value_input`
    /// `[batch, s_k, embed_dim]` (the same tensor for self-attention; the encoder's output in a
    /// decoder's cross-attention). The output is `[batch, s_q, head_dim]`; the weights, when the pass
    /// asks for them, `[batch, s_q, s_k]`.
    pub fn forward(
        &self,
        query_input: &Tensor,
        key_value_input: &Tensor,
        mask: Option<&Tensor>,
        pass: Pass,
    ) -> AttentionOutput {
        let q = self.query.forward(query_input); // [batch, s_q, head_dim]
        let k = self.key.forward(key_value_input); // [batch, s_k, head_dim]
        let v = self.value.forward(key_value_input);
        let (output, weights) = attention_with_dropout(&q, &k, &v, mask, self.dropout, pass.train);
        AttentionOutput { output, weights: pass.weights.then_some(weights) } // [batch, s_q, head_dim]
    }
}

impl nn::ModuleT for AttentionHead {
    /// Self-attention without a mask.
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        self.forward(xs, xs, None, train.into()).output
    }
}
