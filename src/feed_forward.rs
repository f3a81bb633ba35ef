//! # The position-wise feed-forward layer (`chapters/04-feed-forward.md`)
//!
//! Attention mixes information *between* tokens; the feed-forward layer then works on each token on its
//! own. It is a two-layer network: widen the vector to `intermediate_size` (four times the hidden size in
//! BERT), apply a GELU, and project back. Most of a transformer's parameters live here, and it is often
//! read as the place where the model stores what it has learned about words.
//!
//! Chapter section: [`chapters/04-feed-forward.md`](../chapters/04-feed-forward.md) ·
//! notebook `notebooks/04-feed-forward.ipynb`.
use std::borrow::Borrow;

use tch::nn;
use tch::Tensor;

pub use crate::config::Activation;
use crate::config::LayerConfig;
use crate::init;

impl Activation {
    /// Applies the non-linearity elementwise.
    pub fn apply(self, x: &Tensor) -> Tensor {
        match self {
            Activation::Gelu => x.gelu("none"),
            Activation::GeluTanh => x.gelu("tanh"),
            Activation::Relu => x.relu(),
        }
    }
}

/// linear → GELU → linear, applied to every position separately.
///
/// Given the path of an encoder layer, the first linear map is at `intermediate.dense` and the second at
/// `output.dense`, Hugging Face BERT's names. The book's version ends with dropout; here that dropout
/// belongs to the [`Residual`](crate::Residual) block around every sub-layer, so it is written once for
/// attention and feed-forward alike (in evaluation the two are the same).
#[derive(Debug)]
pub struct FeedForward {
    pub linear_1: nn::Linear,
    pub linear_2: nn::Linear,
    pub activation: Activation,
}

impl FeedForward {
    /// The two linear maps and the activation of one layer's `config` (for a BERT model,
    /// [`BertConfig::layer`](crate::BertConfig::layer)).
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &LayerConfig) -> Self {
        let p = p.borrow();
        FeedForward {
            linear_1: init::linear(p / "intermediate" / "dense", config.hidden_size, config.intermediate_size),
            linear_2: init::linear(p / "output" / "dense", config.intermediate_size, config.hidden_size),
            activation: config.hidden_act,
        }
    }
}

impl nn::Module for FeedForward {
    fn forward(&self, x: &Tensor) -> Tensor {
        // Widen, GELU, narrow: the book's order and BERT's (some copies of the chapter print `linear_2`
        // twice and no GELU, a slip that would not even run; chapters/04-feed-forward.md says so).
        let wide = self.linear_1.forward(x); // [batch, seq, intermediate]
        let activated = self.activation.apply(&wide);
        self.linear_2.forward(&activated) // [batch, seq, hidden]
    }
}
