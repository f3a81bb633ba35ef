//! # Step 10: the encoder layer
//!
//! One encoder layer is multi-head self-attention followed by the feed-forward layer, each wrapped in a
//! skip connection (the sub-layer's output is *added* to its input) and a layer normalization (each token
//! vector rescaled to mean 0 and variance 1, then given a learned scale and shift). Where the LayerNorm
//! goes matters: the 2017 paper and BERT normalize after the addition (post-LN); the chapter, like most
//! recent models, normalizes the sub-layer's input (pre-LN), which trains more stably. Both are here,
//! chosen explicitly with [`LayerNormPlacement`].
//!
//! Chapter section: [`chapters/05-layer-norm-and-encoder-layer.md`](../chapters/05-layer-norm-and-encoder-layer.md) ·
//! notebook `notebooks/05-layer-norm-and-encoder-layer.ipynb`.
use std::borrow::Borrow;

use tch::nn::{self, Module, ModuleT};
use tch::Tensor;

use crate::config::BertConfig;
use crate::feed_forward::FeedForward;
use crate::fused_attention::FusedMultiHeadAttention;
use crate::multi_head_attention::MultiHeadAttention;

/// Where each sub-layer's LayerNorm sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerNormPlacement {
    /// `x + sublayer(LayerNorm(x))`: the chapter's choice; gradients flow well without warm-up tricks.
    Pre,
    /// `LayerNorm(x + sublayer(x))`: the 2017 paper's and BERT's choice; pretrained BERT checkpoints need it.
    Post,
}

/// Which implementation of multi-head attention a layer uses. Both compute the same function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionKind {
    /// The chapter's list of [`AttentionHead`](crate::AttentionHead)s ([`MultiHeadAttention`]).
    PerHead,
    /// One projection for all heads ([`FusedMultiHeadAttention`]); faster, and the layout of checkpoints.
    Fused,
}

/// The choices that the chapter and BERT make differently. There is no default on purpose: say which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncoderOptions {
    pub placement: LayerNormPlacement,
    pub attention: AttentionKind,
    /// Whether the embeddings add BERT's token type (segment) embeddings; the chapter's do not.
    pub token_types: bool,
}

impl EncoderOptions {
    /// The chapter's encoder: pre-LN, per-head attention.
    pub fn book() -> Self {
        EncoderOptions { placement: LayerNormPlacement::Pre, attention: AttentionKind::PerHead, token_types: false }
    }

    /// BERT's encoder: post-LN, fused attention, token type embeddings (the layout of pretrained checkpoints).
    pub fn bert() -> Self {
        EncoderOptions { placement: LayerNormPlacement::Post, attention: AttentionKind::Fused, token_types: true }
    }
}

/// The attention block of a layer, in either implementation.
#[derive(Debug)]
pub enum Attention {
    PerHead(MultiHeadAttention),
    Fused(FusedMultiHeadAttention),
}

impl Attention {
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &BertConfig, kind: AttentionKind) -> Self {
        match kind {
            AttentionKind::PerHead => Attention::PerHead(MultiHeadAttention::new(p, config)),
            AttentionKind::Fused => Attention::Fused(FusedMultiHeadAttention::new(p, config)),
        }
    }

    /// Output `[batch, seq, hidden]`.
    pub fn forward(&self, x: &Tensor, mask: Option<&Tensor>, train: bool) -> Tensor {
        match self {
            Attention::PerHead(a) => a.forward(x, mask, train),
            Attention::Fused(a) => a.forward(x, mask, train),
        }
    }

    /// Output `[batch, seq, hidden]` and weights `[batch, heads, seq, seq]`.
    pub fn forward_with_weights(&self, x: &Tensor, mask: Option<&Tensor>, train: bool) -> (Tensor, Tensor) {
        match self {
            Attention::PerHead(a) => a.forward_with_weights(x, mask, train),
            Attention::Fused(a) => a.forward_with_weights(x, mask, train),
        }
    }
}

/// Self-attention and feed-forward, each with a skip connection and a LayerNorm.
///
/// Under a layer's path (`encoder.layer.{i}`), the attention is at `attention`, the LayerNorm that goes
/// with it at `attention.output.LayerNorm`, the feed-forward at `intermediate`/`output`, and its
/// LayerNorm at `output.LayerNorm`: the names of Hugging Face BERT.
#[derive(Debug)]
pub struct TransformerEncoderLayer {
    pub layer_norm_1: nn::LayerNorm,
    pub layer_norm_2: nn::LayerNorm,
    pub attention: Attention,
    pub feed_forward: FeedForward,
    pub placement: LayerNormPlacement,
    dropout: f64,
}

impl TransformerEncoderLayer {
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &BertConfig, options: EncoderOptions) -> Self {
        let p = p.borrow();
        let ln = nn::LayerNormConfig { eps: config.layer_norm_eps, ..Default::default() };
        let h = config.hidden_size;
        TransformerEncoderLayer {
            layer_norm_1: nn::layer_norm(p / "attention" / "output" / "LayerNorm", vec![h], ln),
            layer_norm_2: nn::layer_norm(p / "output" / "LayerNorm", vec![h], ln),
            attention: Attention::new(p / "attention", config, options.attention),
            feed_forward: FeedForward::new(p, config),
            placement: options.placement,
            dropout: config.hidden_dropout_prob,
        }
    }

    /// The layer around a given attention call, which returns the attention output and maybe its weights.
    fn forward_around(
        &self,
        x: &Tensor,
        train: bool,
        attention: impl FnOnce(&Tensor) -> (Tensor, Option<Tensor>),
    ) -> (Tensor, Option<Tensor>) {
        match self.placement {
            LayerNormPlacement::Pre => {
                let (attended, weights) = attention(&self.layer_norm_1.forward(x));
                let x = x + attended.dropout(self.dropout, train); // skip connection
                let x = &x + self.feed_forward.forward_t(&self.layer_norm_2.forward(&x), train);
                (x, weights) // [batch, seq, hidden]
            }
            LayerNormPlacement::Post => {
                let (attended, weights) = attention(x);
                let x = self.layer_norm_1.forward(&(x + attended.dropout(self.dropout, train)));
                let x = self.layer_norm_2.forward(&(&x + self.feed_forward.forward_t(&x, train)));
                (x, weights) // [batch, seq, hidden]
            }
        }
    }

    /// Runs the layer on `[batch, seq, hidden]`. `mask` (0 = blocked) broadcasts against `[batch, seq, seq]`.
    pub fn forward(&self, x: &Tensor, mask: Option<&Tensor>, train: bool) -> Tensor {
        self.forward_around(x, train, |h| (self.attention.forward(h, mask, train), None)).0
    }

    /// Like [`TransformerEncoderLayer::forward`], also returning the attention weights `[batch, heads, seq, seq]`.
    pub fn forward_with_weights(&self, x: &Tensor, mask: Option<&Tensor>, train: bool) -> (Tensor, Tensor) {
        let (x, weights) = self.forward_around(x, train, |h| {
            let (out, weights) = self.attention.forward_with_weights(h, mask, train);
            (out, Some(weights))
        });
        (x, weights.expect("the attention call returned its weights"))
    }
}

impl nn::ModuleT for TransformerEncoderLayer {
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        self.forward(xs, None, train)
    }
}
