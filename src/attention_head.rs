//! # Step 8a: one attention head
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
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, embed_dim: i64, head_dim: i64, dropout: f64) -> Self {
        let p = p.borrow();
        let cfg = Default::default();
        AttentionHead {
            query: nn::linear(p / "query", embed_dim, head_dim, cfg),
            key: nn::linear(p / "key", embed_dim, head_dim, cfg),
            value: nn::linear(p / "value", embed_dim, head_dim, cfg),
            dropout,
        }
    }

    /// Self-attention over `hidden_state` `[batch, seq, embed_dim]`: returns the head's output
    /// `[batch, seq, head_dim]` and its attention weights `[batch, seq, seq]`.
    pub fn forward_with_weights(&self, hidden_state: &Tensor, mask: Option<&Tensor>, train: bool) -> (Tensor, Tensor) {
        self.forward_cross_with_weights(hidden_state, hidden_state, mask, train)
    }

    /// Attention from one sequence to another: queries from `query_input` `[batch, s_q, embed_dim]`, keys
    /// and values from `key_value_input` `[batch, s_k, embed_dim]` (in a decoder, the encoder's output).
    /// Returns `[batch, s_q, head_dim]` and the rectangular weights `[batch, s_q, s_k]`.
    pub fn forward_cross_with_weights(
        &self,
        query_input: &Tensor,
        key_value_input: &Tensor,
        mask: Option<&Tensor>,
        train: bool,
    ) -> (Tensor, Tensor) {
        let q = self.query.forward(query_input); // [batch, s_q, head_dim]
        let k = self.key.forward(key_value_input); // [batch, s_k, head_dim]
        let v = self.value.forward(key_value_input);
        attention_with_dropout(&q, &k, &v, mask, self.dropout, train) // [batch, s_q, head_dim], [batch, s_q, s_k]
    }

    /// The head's output alone, `[batch, seq, head_dim]`.
    pub fn forward(&self, hidden_state: &Tensor, mask: Option<&Tensor>, train: bool) -> Tensor {
        self.forward_with_weights(hidden_state, mask, train).0
    }
}

impl nn::ModuleT for AttentionHead {
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        self.forward(xs, None, train)
    }
}
