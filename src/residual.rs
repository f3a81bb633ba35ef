//! # The residual block: a skip connection and a LayerNorm around a sub-layer
//!
//! Every sub-layer of every layer — self-attention, encoder-decoder attention, feed-forward — sits in
//! the same wrapper: its output is dropped out while training and *added* to its input (the skip
//! connection), and a LayerNorm keeps the numbers in range. Whether the LayerNorm comes before the
//! sub-layer (pre-LN, `x + f(LN(x))`) or after the addition (post-LN, `LN(x + f(x))`) is the one choice,
//! and this block makes it in one place for the encoder and the decoder alike.
//!
//! Chapter section: [`chapters/05-layer-norm-and-encoder-layer.md`](../chapters/05-layer-norm-and-encoder-layer.md).
use std::borrow::Borrow;

use tch::nn::{self, Module};
use tch::Tensor;

use crate::attention::AttentionOutput;
use crate::config::LayerConfig;
pub use crate::config::LayerNormPlacement;

/// A LayerNorm, a dropout rate and where the LayerNorm goes. The LayerNorm's parameters sit at the path
/// given (Hugging Face BERT: `attention.output.LayerNorm` and `output.LayerNorm`).
#[derive(Debug)]
pub struct Residual {
    pub layer_norm: nn::LayerNorm,
    pub placement: LayerNormPlacement,
    pub dropout: f64,
}

impl Residual {
    /// A block for vectors of `config.hidden_size`, with its epsilon, its `hidden_dropout_prob` and its
    /// LayerNorm `placement`: everything the block needs comes from the layer's one configuration.
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &LayerConfig) -> Self {
        let ln = nn::LayerNormConfig { eps: config.layer_norm_eps, ..Default::default() };
        Residual {
            layer_norm: nn::layer_norm(p, vec![config.hidden_size], ln),
            placement: config.placement,
            dropout: config.hidden_dropout_prob,
        }
    }

    /// Wraps `sublayer` around `x` `[batch, seq, hidden]`: `x + dropout(f(LN(x)))` (pre-LN) or
    /// `LN(x + dropout(f(x)))` (post-LN). The block returns what the sub-layer returns, with its tensor
    /// replaced by the block's result (the shape of `x`): a feed-forward's `Tensor` stays a `Tensor`, an
    /// attention's [`AttentionOutput`] keeps its weights.
    ///
    /// ```
    /// use tch::{nn, Device, Kind, Tensor};
    /// use transformer_anatomy::{BertConfig, EncoderOptions, Residual};
    ///
    /// let vs = nn::VarStore::new(Device::Cpu);
    /// let config = BertConfig::tiny(EncoderOptions::book()).layer(); // pre-LN
    /// let block = Residual::new(vs.root() / "ln", &config);
    /// let x = Tensor::randn([1, 3, 32], (Kind::Float, Device::Cpu));
    /// // A sub-layer that returns zeros leaves a pre-LN block's input unchanged: the skip path is clean.
    /// let y = block.apply(&x, false, |h| h.zeros_like());
    /// assert!(y.allclose(&x, 0.0, 0.0, false));
    /// ```
    pub fn apply<O: SubLayerOutput>(&self, x: &Tensor, train: bool, sublayer: impl FnOnce(&Tensor) -> O) -> O {
        let (p, ln) = (self.dropout, &self.layer_norm);
        match self.placement {
            LayerNormPlacement::Pre => sublayer(&ln.forward(x)).map(|y| x + y.dropout(p, train)),
            LayerNormPlacement::Post => sublayer(x).map(|y| ln.forward(&(x + y.dropout(p, train)))),
        }
    }
}

/// What a sub-layer returns: a plain tensor, or an attention's output (a tensor and, perhaps, its
/// weights). The residual block changes the tensor and hands the rest back untouched.
pub trait SubLayerOutput {
    /// The same output with its tensor `y` replaced by `f(y)`.
    fn map(self, f: impl FnOnce(&Tensor) -> Tensor) -> Self;
}

impl SubLayerOutput for Tensor {
    fn map(self, f: impl FnOnce(&Tensor) -> Tensor) -> Self {
        f(&self)
    }
}

impl SubLayerOutput for AttentionOutput {
    fn map(self, f: impl FnOnce(&Tensor) -> Tensor) -> Self {
        AttentionOutput { output: f(&self.output), weights: self.weights }
    }
}
