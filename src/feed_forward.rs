//! # Step 9: the position-wise feed-forward layer
//!
//! Attention mixes information *between* tokens; the feed-forward layer then works on each token on its
//! own. It is a two-layer network: widen the vector to `intermediate_size` (four times the hidden size in
//! BERT), apply a GELU, and project back. Most of a transformer's parameters live here, and it is often
//! read as the place where the model stores what it has learned about words.
//!
//! Chapter section: [`chapters/04-feed-forward.md`](../chapters/04-feed-forward.md) ·
//! notebook `notebooks/04-feed-forward.ipynb`.
use std::borrow::Borrow;

use anyhow::{bail, Result};
use tch::nn::{self, Module};
use tch::Tensor;

use crate::config::BertConfig;

/// The non-linearity between the two linear layers, as named by `hidden_act` in `config.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// The exact GELU, `x · Φ(x)` with the normal CDF Φ (BERT's `gelu`).
    Gelu,
    /// The tanh approximation of GELU (`gelu_new`, `gelu_pytorch_tanh`).
    GeluTanh,
    /// `max(0, x)`, the original Transformer's choice.
    Relu,
}

impl Activation {
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "gelu" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" => Activation::GeluTanh,
            "relu" => Activation::Relu,
            other => bail!("unsupported hidden_act {other:?}: use \"gelu\", \"gelu_new\" or \"relu\""),
        })
    }

    pub fn apply(self, x: &Tensor) -> Tensor {
        match self {
            Activation::Gelu => x.gelu("none"),
            Activation::GeluTanh => x.gelu("tanh"),
            Activation::Relu => x.relu(),
        }
    }
}

/// linear → GELU → linear → dropout, applied to every position separately.
///
/// Given the path of an encoder layer, the first linear map is at `intermediate.dense` and the second at
/// `output.dense`, Hugging Face BERT's names.
#[derive(Debug)]
pub struct FeedForward {
    pub linear_1: nn::Linear,
    pub linear_2: nn::Linear,
    pub activation: Activation,
    dropout: f64,
}

impl FeedForward {
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &BertConfig) -> Self {
        let p = p.borrow();
        let cfg = Default::default();
        FeedForward {
            linear_1: nn::linear(p / "intermediate" / "dense", config.hidden_size, config.intermediate_size, cfg),
            linear_2: nn::linear(p / "output" / "dense", config.intermediate_size, config.hidden_size, cfg),
            activation: Activation::from_name(&config.hidden_act).expect("config was validated"),
            dropout: config.hidden_dropout_prob,
        }
    }
}

impl nn::ModuleT for FeedForward {
    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        // The chapter's printed listing calls `linear_2` twice and never applies the GELU, which is not
        // what BERT (or the text around that listing) describes. Here the order is the correct one:
        // widen, GELU, narrow, dropout.
        let wide = self.linear_1.forward(x); // [batch, seq, intermediate]
        let activated = self.activation.apply(&wide);
        let narrow = self.linear_2.forward(&activated); // [batch, seq, hidden]
        narrow.dropout(self.dropout, train)
    }
}
