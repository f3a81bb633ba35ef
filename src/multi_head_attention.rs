//! # Multi-head attention, the chapter's way (`chapters/03-multi-head-attention.md`)
//!
//! One head can only focus on one kind of relation at a time, so the layer runs several heads side by
//! side, each on its own `hidden_size / heads` slice, concatenates their outputs back to the hidden size
//! and mixes them with one more linear map. This is the chapter's construction, a list of
//! [`AttentionHead`]s, which is easy to read; [`FusedMultiHeadAttention`]
//! computes the same thing with one matrix product per projection.
//!
//! Chapter section: [`chapters/03-multi-head-attention.md`](../chapters/03-multi-head-attention.md) ·
//! notebook `notebooks/03-multi-head-attention.ipynb`.
use std::borrow::Borrow;

use tch::nn::{self, Module};
use tch::Tensor;

use crate::attention::{Attention, AttentionOutput, Pass};
use crate::attention_head::AttentionHead;
use crate::config::LayerConfig;
use crate::fused_attention::FusedMultiHeadAttention;
use crate::init;

/// Multi-head attention built from separate heads and an output projection.
///
/// Given the path of a layer's `attention` block, the heads live at `self.heads.{i}.{query,key,value}`
/// and the output projection at `output.dense`, Hugging Face BERT's name for it.
#[derive(Debug)]
pub struct MultiHeadAttention {
    pub heads: Vec<AttentionHead>,
    pub output_linear: nn::Linear,
}

impl MultiHeadAttention {
    /// The heads and output projection of one layer's `config` (for a BERT model,
    /// [`BertConfig::layer`](crate::BertConfig::layer)); only its sizes and attention dropout are used.
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &LayerConfig) -> Self {
        let p = p.borrow();
        let (embed_dim, head_dim) = (config.hidden_size, config.head_dim());
        let heads_path = p / "self" / "heads";
        let heads = (0..config.num_attention_heads)
            .map(|i| AttentionHead::new(&heads_path / i, embed_dim, head_dim, config.attention_probs_dropout_prob))
            .collect();
        let output_linear = init::linear(p / "output" / "dense", embed_dim, embed_dim);
        MultiHeadAttention { heads, output_linear }
    }

    /// Copies the weights of a fused attention block into the heads: head `i` takes rows
    /// `i * head_dim .. (i + 1) * head_dim` of the fused query, key and value matrices. This is how a real
    /// checkpoint, which stores the fused matrices, is read into the chapter's per-head layout.
    ///
    /// ```
    /// use tch::{nn, Device, Kind, Tensor};
    /// use tch::nn::ModuleT;
    /// use transformer_anatomy::{BertConfig, EncoderOptions, FusedMultiHeadAttention, MultiHeadAttention};
    ///
    /// let config = BertConfig::tiny(EncoderOptions::book()).layer();
    /// let vs = nn::VarStore::new(Device::Cpu);
    /// let fused = FusedMultiHeadAttention::new(vs.root() / "fused", &config);
    /// let mut per_head = MultiHeadAttention::new(vs.root() / "per_head", &config);
    /// per_head.copy_from_fused(&fused);
    /// let x = Tensor::randn([2, 5, config.hidden_size], (Kind::Float, Device::Cpu));
    /// let (a, b) = (per_head.forward_t(&x, false), fused.forward_t(&x, false)); // self-attention, no mask
    /// assert!(a.allclose(&b, 1e-5, 1e-5, false));
    /// ```
    pub fn copy_from_fused(&mut self, fused: &FusedMultiHeadAttention) {
        let head_dim = fused.head_dim;
        tch::no_grad(|| {
            for (i, head) in self.heads.iter_mut().enumerate() {
                let start = i as i64 * head_dim;
                for (part, whole) in
                    [(&mut head.query, &fused.query), (&mut head.key, &fused.key), (&mut head.value, &fused.value)]
                {
                    part.ws.copy_(&whole.ws.narrow(0, start, head_dim));
                    if let (Some(b), Some(wb)) = (part.bs.as_mut(), whole.bs.as_ref()) {
                        b.copy_(&wb.narrow(0, start, head_dim));
                    }
                }
            }
            self.output_linear.ws.copy_(&fused.output.ws);
            if let (Some(b), Some(wb)) = (self.output_linear.bs.as_mut(), fused.output.bs.as_ref()) {
                b.copy_(wb);
            }
        });
    }
}

impl Attention for MultiHeadAttention {
    /// Runs every head, puts their outputs side by side and mixes them with the output projection.
    fn forward(
        &self,
        query_input: &Tensor,
        key_value_input: &Tensor,
        mask: Option<&Tensor>,
        pass: Pass,
    ) -> AttentionOutput {
        let heads: Vec<AttentionOutput> =
            self.heads.iter().map(|head| head.forward(query_input, key_value_input, mask, pass)).collect();
        let outputs: Vec<&Tensor> = heads.iter().map(|h| &h.output).collect();
        let output = self.output_linear.forward(&Tensor::cat(&outputs, -1)); // [batch, s_q, heads * head_dim = hidden]
        let weights =
            pass.weights.then(|| Tensor::stack(&heads.iter().flat_map(|h| &h.weights).collect::<Vec<_>>(), 1));
        AttentionOutput { output, weights } // weights: [batch, heads, s_q, s_k]
    }

    fn hidden_size(&self) -> i64 {
        self.output_linear.ws.size()[0]
    }

    fn num_heads(&self) -> i64 {
        self.heads.len() as i64
    }
}

impl nn::ModuleT for MultiHeadAttention {
    /// Self-attention without a mask.
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        Attention::forward(self, xs, xs, None, train.into()).output
    }
}
