//! # The encoder (`chapters/07-encoder-and-classifier.md`)
//!
//! The full encoder is the embeddings followed by `num_hidden_layers` identical encoder layers, each
//! refining every token's vector with information from the others. Its output has the same shape as the
//! embeddings, `[batch, seq, hidden]`: one contextual vector per token, the "hidden state" that task
//! heads read from.
//!
//! Chapter section: [`chapters/07-encoder-and-classifier.md`](../chapters/07-encoder-and-classifier.md) ·
//! notebook `notebooks/07-encoder-and-classifier.ipynb`.
use std::borrow::Borrow;

use anyhow::{ensure, Result};
use tch::nn::{self, Module};
use tch::Tensor;

use crate::attention::{broadcasts_to, Pass};
use crate::config::{BertConfig, StackConfig};
use crate::embeddings::{check_input_ids, Embeddings};
use crate::encoder_layer::TransformerEncoderLayer;

/// What an encoder returns.
#[derive(Debug)]
pub struct EncoderOutput {
    /// `[batch, seq, hidden]`: one contextual vector per token.
    pub last_hidden_state: Tensor,
    /// One `[batch, heads, seq, seq]` tensor per layer when the pass asked for weights; else empty.
    pub attentions: Vec<Tensor>,
}

/// The encoder layers alone, at `layer.{i}` under the given path, and optionally a final LayerNorm at
/// `layer_norm`. BERT and the book stop after the last layer; the original Transformer in its pre-LN
/// form normalizes the stack's output once more (every layer there leaves its skip path un-normalized).
/// The decoder's stack, [`TransformerDecoder`](crate::TransformerDecoder), is built the same way.
#[derive(Debug)]
pub struct EncoderStack {
    pub layers: Vec<TransformerEncoderLayer>,
    pub final_layer_norm: Option<nn::LayerNorm>,
}

impl EncoderStack {
    /// `config.num_layers` layers built from `config.layer`, and a final LayerNorm if
    /// `config.final_layer_norm` (a BERT model's [`BertConfig::stack`] has none).
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &StackConfig) -> Self {
        let p = p.borrow();
        EncoderStack {
            layers: (0..config.num_layers)
                .map(|i| TransformerEncoderLayer::new(p / "layer" / i, &config.layer))
                .collect(),
            final_layer_norm: final_layer_norm(p, config),
        }
    }

    /// Runs every layer on already-embedded vectors `[batch, seq, hidden]`.
    pub fn forward(&self, x: &Tensor, mask: Option<&Tensor>, pass: impl Into<Pass>) -> EncoderOutput {
        let pass = pass.into();
        let mut x = x.shallow_clone();
        let mut attentions = Vec::new();
        for layer in &self.layers {
            let out = layer.forward(&x, mask, pass);
            x = out.hidden_state;
            attentions.extend(out.weights);
        }
        if let Some(ln) = &self.final_layer_norm {
            x = ln.forward(&x);
        }
        EncoderOutput { last_hidden_state: x, attentions } // [batch, seq, hidden]
    }
}

/// The LayerNorm at `layer_norm` that closes a stack (encoder or decoder) when `config.final_layer_norm`.
pub(crate) fn final_layer_norm(p: &nn::Path, config: &StackConfig) -> Option<nn::LayerNorm> {
    let ln = nn::LayerNormConfig { eps: config.layer.layer_norm_eps, ..Default::default() };
    config.final_layer_norm.then(|| nn::layer_norm(p / "layer_norm", vec![config.layer.hidden_size], ln))
}

/// Embeddings and a stack of encoder layers, at `embeddings` and `encoder.layer.{i}` under the given
/// path, as in Hugging Face's `BertModel`.
#[derive(Debug)]
pub struct TransformerEncoder {
    pub embeddings: Embeddings,
    pub stack: EncoderStack,
    pub config: BertConfig,
}

impl TransformerEncoder {
    /// Builds the encoder the way `config.options` says (the chapter's or BERT's); fails when the
    /// configuration does not describe a buildable model.
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &BertConfig) -> Result<Self> {
        config.validate()?;
        let p = p.borrow();
        Ok(TransformerEncoder {
            embeddings: Embeddings::new(p / "embeddings", config),
            stack: EncoderStack::new(p / "encoder", &config.stack()),
            config: config.clone(),
        })
    }

    /// The checked forward pass for ids that come from outside: it validates them, the token type ids
    /// (`[batch, seq]`, all 0 when `None`) and the mask's shape, and returns a clear error instead of
    /// letting LibTorch fail. Output `[batch, seq, hidden]`, and every layer's weights when asked.
    ///
    /// ```
    /// use tch::{nn, Device, Kind, Tensor};
    /// use transformer_anatomy::{BertConfig, EncoderOptions, Pass, TransformerEncoder};
    ///
    /// let config = BertConfig::tiny(EncoderOptions::book()); // 16 positions, 100 tokens
    /// let vs = nn::VarStore::new(Device::Cpu);
    /// let encoder = TransformerEncoder::new(vs.root(), &config)?;
    /// let ids = Tensor::from_slice(&[5i64, 17, 42]).view([1, 3]);
    /// let out = encoder.try_forward(&ids, None, None, Pass::WEIGHTS)?;
    /// assert_eq!(out.last_hidden_state.size(), [1, 3, 32]);
    /// assert_eq!(out.attentions.len(), 2); // one [1, 4, 3, 3] tensor per layer
    ///
    /// let too_long = Tensor::zeros([1, 20], (Kind::Int64, Device::Cpu));
    /// assert!(encoder.try_forward(&too_long, None, None, false).is_err());
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    pub fn try_forward(
        &self,
        input_ids: &Tensor,
        token_type_ids: Option<&Tensor>,
        mask: Option<&Tensor>,
        pass: impl Into<Pass>,
    ) -> Result<EncoderOutput> {
        let pass = pass.into();
        self.check_inputs(input_ids, token_type_ids, mask)?;
        let x = self.embeddings.forward_with_types(input_ids, token_type_ids, pass.train); // [batch, seq, hidden]
        Ok(self.stack.forward(&x, mask, pass))
    }

    /// Checks ids, token type ids and mask before they reach LibTorch (see [`TransformerEncoder::try_forward`]).
    pub fn check_inputs(
        &self,
        input_ids: &Tensor,
        token_type_ids: Option<&Tensor>,
        mask: Option<&Tensor>,
    ) -> Result<()> {
        check_input_ids(input_ids, &self.config)?;
        let (batch, seq) = (input_ids.size()[0], input_ids.size()[1]);
        if let Some(types) = token_type_ids {
            ensure!(
                types.size() == input_ids.size(),
                "token type ids {:?} must match the ids {:?}",
                types.size(),
                input_ids.size()
            );
            let (min, max) = (types.f_min()?.f_int64_value(&[])?, types.f_max()?.f_int64_value(&[])?);
            ensure!(
                min >= 0 && max < self.config.type_vocab_size,
                "token type ids must lie in 0..{}, got {min}..={max}",
                self.config.type_vocab_size
            );
        }
        if let Some(mask) = mask {
            ensure!(
                broadcasts_to(&mask.size(), &[batch, seq, seq]),
                "the attention mask of shape {:?} does not broadcast to [batch, seq, seq] = [{batch}, {seq}, {seq}]",
                mask.size()
            );
        }
        Ok(())
    }
}

impl nn::ModuleT for TransformerEncoder {
    /// `[batch, seq]` ids → `[batch, seq, hidden]`. For untrusted ids use [`TransformerEncoder::try_forward`].
    fn forward_t(&self, input_ids: &Tensor, train: bool) -> Tensor {
        let x = self.embeddings.forward_t(input_ids, train); // [batch, seq, hidden]
        self.stack.forward(&x, None, train).last_hidden_state
    }
}
