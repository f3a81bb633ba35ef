//! # A classification head (`chapters/07-encoder-and-classifier.md`, *A classification head*)
//!
//! To classify a whole text, one vector must stand for it. BERT-style models are trained so that the
//! first token (`[CLS]` when special tokens are added) gathers what the task needs, so the head takes
//! only that token's final hidden state, applies dropout and a linear map to `num_labels` scores
//! (logits). Everything else the encoder computed is ignored by the head.
//!
//! Chapter section: [`chapters/07-encoder-and-classifier.md`](../chapters/07-encoder-and-classifier.md) ·
//! notebook `notebooks/07-encoder-and-classifier.ipynb`.
use std::borrow::Borrow;

use anyhow::Result;
use tch::nn::{self, Module};
use tch::{IndexOp, Tensor};

use crate::config::BertConfig;
use crate::encoder::TransformerEncoder;
use crate::init;

/// An encoder (at `bert`) and a linear classifier (at `classifier`) reading the first token, named as in
/// Hugging Face's `BertForSequenceClassification` (which adds a pooler; the chapter does not).
#[derive(Debug)]
pub struct TransformerForSequenceClassification {
    pub encoder: TransformerEncoder,
    pub classifier: nn::Linear,
    dropout: f64,
}

impl TransformerForSequenceClassification {
    /// The encoder `config` describes (built as its `options` say) and a head for `config.num_labels`
    /// classes; fails when the configuration does not describe a buildable model.
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &BertConfig) -> Result<Self> {
        let p = p.borrow();
        Ok(TransformerForSequenceClassification {
            encoder: TransformerEncoder::new(p / "bert", config)?,
            classifier: init::linear(p / "classifier", config.hidden_size, config.num_labels),
            dropout: config.hidden_dropout_prob,
        })
    }

    /// The head alone: `[batch, seq, hidden]` hidden states → `[batch, num_labels]` logits.
    pub fn head(&self, hidden_state: &Tensor, train: bool) -> Tensor {
        let first = hidden_state.i((.., 0, ..)); // [batch, hidden]: the first token only
        self.classifier.forward(&first.dropout(self.dropout, train)) // [batch, num_labels]
    }

    /// Checked forward pass for ids from outside (see [`TransformerEncoder::try_forward`]).
    pub fn try_forward(&self, input_ids: &Tensor, train: bool) -> Result<Tensor> {
        Ok(self.head(&self.encoder.try_forward(input_ids, None, None, train)?.last_hidden_state, train))
    }
}

impl nn::ModuleT for TransformerForSequenceClassification {
    fn forward_t(&self, input_ids: &Tensor, train: bool) -> Tensor {
        self.head(&self.encoder.forward_t(input_ids, train), train)
    }
}
