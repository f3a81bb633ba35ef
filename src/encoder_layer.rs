//! # The encoder layer (`chapters/05-layer-norm-and-encoder-layer.md`)
//!
//! One encoder layer is multi-head self-attention followed by the feed-forward layer, each wrapped in a
//! skip connection (the sub-layer's output is *added* to its input) and a layer normalization (each token
//! vector rescaled to mean 0 and variance 1, then given a learned scale and shift). Where the LayerNorm
//! goes matters: the 2017 paper and BERT normalize after the addition (post-LN); the chapter, like most
//! recent models, normalizes the sub-layer's input (pre-LN), which trains more stably. Both are here,
//! chosen explicitly with [`LayerConfig::placement`]; each sub-layer sits in one [`Residual`] block.
//!
//! Chapter section: [`chapters/05-layer-norm-and-encoder-layer.md`](../chapters/05-layer-norm-and-encoder-layer.md) ·
//! notebook `notebooks/05-layer-norm-and-encoder-layer.ipynb`.
use std::borrow::Borrow;

use tch::nn::{self, Module};
use tch::Tensor;

use crate::attention::{Attention, Pass};
use crate::config::LayerConfig;
pub use crate::config::{AttentionKind, EncoderOptions};
use crate::feed_forward::FeedForward;
use crate::fused_attention::FusedMultiHeadAttention;
use crate::multi_head_attention::MultiHeadAttention;
use crate::residual::Residual;

/// The attention block of a layer, in either implementation. It dereferences to `dyn Attention`, so
/// `layer.attention.forward(..)` runs whichever it holds.
#[derive(Debug)]
pub enum AttentionBlock {
    PerHead(MultiHeadAttention),
    Fused(FusedMultiHeadAttention),
}

impl AttentionBlock {
    /// The implementation that `config.attention` names, built from the layer's sizes.
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &LayerConfig) -> Self {
        match config.attention {
            AttentionKind::PerHead => AttentionBlock::PerHead(MultiHeadAttention::new(p, config)),
            AttentionKind::Fused => AttentionBlock::Fused(FusedMultiHeadAttention::new(p, config)),
        }
    }

    /// Which implementation this is.
    pub fn kind(&self) -> AttentionKind {
        match self {
            AttentionBlock::PerHead(_) => AttentionKind::PerHead,
            AttentionBlock::Fused(_) => AttentionKind::Fused,
        }
    }
}

impl std::ops::Deref for AttentionBlock {
    type Target = dyn Attention;

    fn deref(&self) -> &(dyn Attention + 'static) {
        match self {
            AttentionBlock::PerHead(a) => a,
            AttentionBlock::Fused(a) => a,
        }
    }
}

/// What a layer returns: the new hidden state and, when the pass asked for them, the attention weights.
#[derive(Debug)]
pub struct LayerOutput {
    /// `[batch, seq, hidden]`
    pub hidden_state: Tensor,
    /// `[batch, heads, seq, seq]`
    pub weights: Option<Tensor>,
}

/// Self-attention and feed-forward, each inside a [`Residual`] block (skip connection and LayerNorm).
///
/// Under a layer's path (`encoder.layer.{i}`), the attention is at `attention`, the LayerNorm that goes
/// with it at `attention.output.LayerNorm`, the feed-forward at `intermediate`/`output`, and its
/// LayerNorm at `output.LayerNorm`: the names of Hugging Face BERT.
#[derive(Debug)]
pub struct TransformerEncoderLayer {
    pub attention: AttentionBlock,
    pub attention_residual: Residual,
    pub feed_forward: FeedForward,
    pub feed_forward_residual: Residual,
}

impl TransformerEncoderLayer {
    /// Builds every part from the one `config` (for a BERT model, [`BertConfig::layer`](crate::BertConfig::layer)),
    /// whose `placement` and `attention` say where the LayerNorms sit and which attention runs.
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &LayerConfig) -> Self {
        let p = p.borrow();
        TransformerEncoderLayer {
            attention: AttentionBlock::new(p / "attention", config),
            attention_residual: Residual::new(p / "attention" / "output" / "LayerNorm", config),
            feed_forward: FeedForward::new(p, config),
            feed_forward_residual: Residual::new(p / "output" / "LayerNorm", config),
        }
    }

    /// Runs the layer on `x` `[batch, seq, hidden]`. `mask` (0 = blocked) broadcasts against
    /// `[batch, seq, seq]`; with [`Pass::WEIGHTS`] the attention weights come back too.
    pub fn forward(&self, x: &Tensor, mask: Option<&Tensor>, pass: impl Into<Pass>) -> LayerOutput {
        let pass = pass.into();
        let attended = self.attention_residual.apply(x, pass.train, |h| self.attention.forward(h, h, mask, pass));
        let x = self.feed_forward_residual.apply(&attended.output, pass.train, |h| self.feed_forward.forward(h));
        LayerOutput { hidden_state: x, weights: attended.weights } // [batch, seq, hidden]
    }
}

impl nn::ModuleT for TransformerEncoderLayer {
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        self.forward(xs, None, train).hidden_state
    }
}
