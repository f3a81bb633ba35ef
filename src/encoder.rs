//! # Step 12: the encoder
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
use tch::nn::{self, ModuleT};
use tch::Tensor;

use crate::config::BertConfig;
use crate::embeddings::{check_input_ids, Embeddings};
use crate::encoder_layer::{EncoderOptions, TransformerEncoderLayer};

/// Embeddings and a stack of encoder layers, at `embeddings` and `encoder.layer.{i}` under the given
/// path, as in Hugging Face's `BertModel`.
#[derive(Debug)]
pub struct TransformerEncoder {
    pub embeddings: Embeddings,
    pub layers: Vec<TransformerEncoderLayer>,
    pub config: BertConfig,
}

impl TransformerEncoder {
    /// Builds the encoder; fails when the configuration does not describe a buildable model.
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &BertConfig, options: EncoderOptions) -> Result<Self> {
        config.validate()?;
        let p = p.borrow();
        let layer_path = p / "encoder" / "layer";
        Ok(TransformerEncoder {
            embeddings: if options.token_types {
                Embeddings::with_token_types(p / "embeddings", config)
            } else {
                Embeddings::new(p / "embeddings", config)
            },
            layers: (0..config.num_hidden_layers)
                .map(|i| TransformerEncoderLayer::new(&layer_path / i, config, options))
                .collect(),
            config: config.clone(),
        })
    }

    /// Runs the layers alone on already-embedded vectors `[batch, seq, hidden]`.
    pub fn forward_layers(&self, x: &Tensor, mask: Option<&Tensor>, train: bool) -> Tensor {
        self.layers.iter().fold(x.shallow_clone(), |x, layer| layer.forward(&x, mask, train))
    }

    /// Like [`TransformerEncoder::forward_layers`], also returning every layer's attention weights
    /// (`[batch, heads, seq, seq]` each).
    pub fn forward_layers_with_weights(&self, x: &Tensor, mask: Option<&Tensor>, train: bool) -> (Tensor, Vec<Tensor>) {
        let mut x = x.shallow_clone();
        let mut all = Vec::with_capacity(self.layers.len());
        for layer in &self.layers {
            let (next, weights) = layer.forward_with_weights(&x, mask, train);
            x = next;
            all.push(weights);
        }
        (x, all)
    }

    /// The checked entry point for ids that come from outside: validates them (and the mask's shape)
    /// and returns a clear error instead of letting LibTorch fail. Output `[batch, seq, hidden]`.
    ///
    /// ```
    /// use tch::{nn, Device, Kind, Tensor};
    /// use transformer_anatomy::{BertConfig, EncoderOptions, TransformerEncoder};
    ///
    /// let config = BertConfig::tiny(); // 16 positions, 100 tokens
    /// let vs = nn::VarStore::new(Device::Cpu);
    /// let encoder = TransformerEncoder::new(vs.root(), &config, EncoderOptions::book())?;
    /// let ids = Tensor::from_slice(&[5i64, 17, 42]).view([1, 3]);
    /// assert_eq!(encoder.try_forward(&ids, None, false)?.size(), [1, 3, 32]);
    ///
    /// let too_long = Tensor::zeros([1, 20], (Kind::Int64, Device::Cpu));
    /// assert!(encoder.try_forward(&too_long, None, false).is_err());
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    pub fn try_forward(&self, input_ids: &Tensor, mask: Option<&Tensor>, train: bool) -> Result<Tensor> {
        self.check_inputs(input_ids, None, mask)?;
        let x = self.embeddings.forward_t(input_ids, train);
        Ok(self.forward_layers(&x, mask, train))
    }

    /// The checked forward pass with everything a pretrained BERT takes and gives: token type ids
    /// (`[batch, seq]`, optional), an attention mask and, per layer, the attention weights
    /// `[batch, heads, seq, seq]`.
    pub fn try_forward_with_weights(
        &self,
        input_ids: &Tensor,
        token_type_ids: Option<&Tensor>,
        mask: Option<&Tensor>,
        train: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        self.check_inputs(input_ids, token_type_ids, mask)?;
        let x = self.embeddings.forward_with_types(input_ids, token_type_ids, train);
        Ok(self.forward_layers_with_weights(&x, mask, train))
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

/// True when a tensor of shape `shape` broadcasts to `target` without growing `target`.
fn broadcasts_to(shape: &[i64], target: &[i64]) -> bool {
    shape.len() <= target.len() && shape.iter().rev().zip(target.iter().rev()).all(|(&a, &b)| a == 1 || a == b)
}

impl nn::ModuleT for TransformerEncoder {
    /// `[batch, seq]` ids → `[batch, seq, hidden]`. For untrusted ids use [`TransformerEncoder::try_forward`].
    fn forward_t(&self, input_ids: &Tensor, train: bool) -> Tensor {
        let x = self.embeddings.forward_t(input_ids, train); // [batch, seq, hidden]
        self.forward_layers(&x, None, train)
    }
}
