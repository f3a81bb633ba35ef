//! The model: token and learned position embeddings, a stack of pre-LN decoder blocks (masked
//! self-attention and a feed-forward, each in the crate's one [`Residual`] block), a final LayerNorm, and
//! a language-model head that reuses the token embedding's matrix ("tied" weights: the same vectors that
//! read a character in also score it on the way out).
use std::borrow::Borrow;

use anyhow::{ensure, Result};
use serde::{Deserialize, Serialize};
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

use crate::attention::Pass;
use crate::config::{Activation, AttentionKind, LayerConfig, LayerNormPlacement};
use crate::decoder_layer::{masked_self_attention, LayerCache};
use crate::feed_forward::FeedForward;
use crate::fused_attention::FusedMultiHeadAttention;
use crate::masks::causal_mask;
use crate::residual::Residual;

/// The sizes of a GPT. The defaults are nanoGPT's laptop-CPU configuration for Shakespeare's characters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GptConfig {
    pub vocab_size: i64,
    pub layers: i64,
    pub heads: i64,
    pub d_model: i64,
    /// How many characters the model sees at once (its position table's length).
    pub context: i64,
    pub dropout: f64,
}

impl GptConfig {
    /// The sizes of one block: feed-forward 4 × d_model wide with GPT-2's GELU, the tanh approximation
    /// (BERT's is the exact one). Besides being GPT-2's, it is quick on one position: LibTorch hands the
    /// exact GELU to oneDNN, whose set-up costs about 9 µs a call however short the vector, five times the
    /// tanh form's cost on 512 numbers — and sampling makes 4 such calls per character. Its blocks are
    /// pre-LN, with fused attention.
    pub fn layer(&self) -> LayerConfig {
        LayerConfig {
            hidden_size: self.d_model,
            num_attention_heads: self.heads,
            intermediate_size: 4 * self.d_model,
            hidden_act: Activation::GeluTanh,
            hidden_dropout_prob: self.dropout,
            attention_probs_dropout_prob: self.dropout,
            layer_norm_eps: 1e-5,
            placement: LayerNormPlacement::Pre,
            attention: AttentionKind::Fused,
        }
    }

    pub fn validate(&self) -> Result<()> {
        ensure!(self.vocab_size > 0, "the vocabulary is empty");
        ensure!(self.layers > 0, "--layers must be at least 1, got {}", self.layers);
        ensure!(self.context > 0, "--context must be at least 1, got {}", self.context);
        ensure!(
            self.heads > 0 && self.d_model > 0 && self.d_model % self.heads == 0,
            "--heads {} must divide --d-model {}: every head takes an equal share of the width",
            self.heads,
            self.d_model
        );
        self.layer().validate()
    }
}

/// One decoder-only block: masked self-attention, then a feed-forward, each in a pre-LN residual block.
/// Parameters at `attention` (query/key/value/output as in BERT), `attention_layer_norm`,
/// `intermediate`/`output` (the feed-forward) and `output_layer_norm` under the given path.
#[derive(Debug)]
pub struct GptBlock {
    pub self_attention: FusedMultiHeadAttention,
    pub self_attention_residual: Residual,
    pub feed_forward: FeedForward,
    pub feed_forward_residual: Residual,
}

/// What a block returns: the new states and, when the pass asked, the attention weights.
#[derive(Debug)]
pub struct BlockOutput {
    /// `[batch, t_new, d_model]`
    pub hidden_state: Tensor,
    /// `[batch, heads, t_new, t_all]`
    pub weights: Option<Tensor>,
}

impl GptBlock {
    /// The block of one layer's `config` ([`GptConfig::layer`]: pre-LN); its attention is always fused,
    /// as the key/value cache needs.
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &LayerConfig) -> Self {
        let p = p.borrow();
        GptBlock {
            self_attention: FusedMultiHeadAttention::new(p / "attention", config),
            self_attention_residual: Residual::new(p / "attention_layer_norm", config),
            feed_forward: FeedForward::new(p, config),
            feed_forward_residual: Residual::new(p / "output_layer_norm", config),
        }
    }

    /// `x` `[batch, t_new, d_model]`; `mask` `[t_new, t_all]` (none when one new position may see all);
    /// with a `cache`, the new positions' keys and values join it — the decoder layer's own code.
    pub fn forward(
        &self,
        x: &Tensor,
        mask: Option<&Tensor>,
        pass: Pass,
        cache: Option<&mut LayerCache>,
    ) -> BlockOutput {
        let (attention, residual) = (&self.self_attention, &self.self_attention_residual);
        let attended = masked_self_attention(attention, residual, x, mask, pass, cache);
        let x = self.feed_forward_residual.apply(&attended.output, pass.train, |h| self.feed_forward.forward(h));
        BlockOutput { hidden_state: x, weights: attended.weights }
    }
}

/// The model's output.
#[derive(Debug)]
pub struct GptOutput {
    /// `[batch, t_new, vocab]`: scores for the character after each position.
    pub logits: Tensor,
    /// One `[batch, heads, t_new, t_all]` per block, when the pass asked.
    pub attentions: Vec<Tensor>,
}

/// A decoder-only Transformer over characters.
#[derive(Debug)]
pub struct GptModel {
    pub config: GptConfig,
    pub tokens: nn::Embedding,
    pub positions: nn::Embedding,
    pub blocks: Vec<GptBlock>,
    pub final_layer_norm: nn::LayerNorm,
}

impl GptModel {
    pub fn new<'a>(p: impl Borrow<nn::Path<'a>>, config: &GptConfig) -> Result<Self> {
        config.validate()?;
        let (p, layer) = (p.borrow(), config.layer());
        let ln = nn::LayerNormConfig { eps: layer.layer_norm_eps, ..Default::default() };
        Ok(GptModel {
            config: *config,
            tokens: crate::init::normal_embedding(p / "tokens", config.vocab_size, config.d_model, 0.02),
            positions: crate::init::normal_embedding(p / "positions", config.context, config.d_model, 0.02),
            blocks: (0..config.layers).map(|i| GptBlock::new(p / "block" / i, &layer)).collect(),
            final_layer_norm: nn::layer_norm(p / "final_layer_norm", vec![config.d_model], ln),
        })
    }

    /// Empty key/value caches, one per block.
    pub fn new_cache(&self) -> Vec<LayerCache> {
        self.blocks.iter().map(|_| LayerCache::default()).collect()
    }

    /// Scores for the next character after each of `ids` `[batch, t_new]`, which stand at positions
    /// `first_position..first_position + t_new`. With a `cache` (holding `first_position` positions), only
    /// the new ids go in; without one, `first_position` is 0 and the causal mask hides later positions.
    pub fn forward(
        &self,
        ids: &Tensor,
        first_position: i64,
        pass: Pass,
        mut cache: Option<&mut [LayerCache]>,
    ) -> Result<GptOutput> {
        ensure!(ids.dim() == 2, "the model reads ids of shape [batch, seq], got {:?}", ids.size());
        let t_new = ids.size()[1];
        let t_all = first_position + t_new;
        ensure!(
            t_all <= self.config.context,
            "{t_all} positions, but the model was trained with a context of {}: slide the window",
            self.config.context
        );
        let device = ids.device();
        let positions = Tensor::arange_start(first_position, t_all, (Kind::Int64, device));
        let mut x = self.tokens.forward(ids) + self.positions.forward(&positions); // [batch, t_new, d_model]
        x = x.dropout(self.config.dropout, pass.train);
        // Rows first_position.. of the causal mask over everything so far; one new row may see it all.
        let mask = (t_new > 1).then(|| causal_mask(t_all, device).narrow(0, first_position, t_new)); // [t_new, t_all]
        let mut attentions = Vec::new();
        for (i, block) in self.blocks.iter().enumerate() {
            let out = block.forward(&x, mask.as_ref(), pass, cache.as_deref_mut().map(|c| &mut c[i]));
            x = out.hidden_state;
            attentions.extend(out.weights);
        }
        let x = self.final_layer_norm.forward(&x);
        let logits = x.matmul(&self.tokens.ws.tr()); // [batch, t_new, vocab]: the head tied to the embedding
        Ok(GptOutput { logits, attentions })
    }

    /// Mean cross-entropy in nats per character of predicting `targets` from `inputs` (both
    /// `[batch, seq]`), in evaluation.
    pub fn loss(&self, inputs: &Tensor, targets: &Tensor, pass: Pass) -> Result<Tensor> {
        let logits = self.forward(inputs, 0, pass, None)?.logits;
        let vocab = self.config.vocab_size;
        Ok(logits.reshape([-1, vocab]).cross_entropy_for_logits(&targets.reshape([-1])))
    }

    /// GPT-2's initialisation: every matrix from N(0, 0.02), the two projections that write into the
    /// residual stream (attention output, feed-forward output) from N(0, 0.02 / √(2 · layers)), biases 0.
    pub fn init_weights(&self, vs: &nn::VarStore) {
        let residual_std = 0.02 / ((2 * self.config.layers) as f64).sqrt();
        tch::no_grad(|| {
            for (name, mut t) in crate::init::sorted_variables(vs) {
                if name.ends_with("layer_norm.weight") || name.ends_with("layer_norm.bias") {
                    continue;
                }
                if name.ends_with(".bias") {
                    let _ = t.zero_();
                } else if name.ends_with("output.dense.weight") {
                    crate::init::fill(&mut t, nn::Init::Randn { mean: 0.0, stdev: residual_std });
                } else if t.dim() == 2 {
                    crate::init::fill(&mut t, nn::Init::Randn { mean: 0.0, stdev: 0.02 });
                }
            }
        });
    }
}
