//! Types the exercises receive, shared by the student files and the reference solutions.
use tch::nn;

use crate::feed_forward::FeedForward;
use crate::fused_attention::FusedMultiHeadAttention;

/// The three linear maps of one attention head (`d_model → head_dim`).
#[derive(Debug)]
pub struct Projections {
    pub query: nn::Linear,
    pub key: nn::Linear,
    pub value: nn::Linear,
}

impl Projections {
    /// Three `d_model → head_dim` maps with PyTorch's default initialisation, under `query`, `key`, `value`.
    pub fn new(p: &nn::Path, d_model: i64, head_dim: i64) -> Self {
        Projections {
            query: crate::init::linear(p / "query", d_model, head_dim),
            key: crate::init::linear(p / "key", d_model, head_dim),
            value: crate::init::linear(p / "value", d_model, head_dim),
        }
    }
}

/// The parts of a decoder layer, without the code that connects them (that is the exercise).
#[derive(Debug)]
pub struct DecoderLayerParts<'a> {
    pub self_attention: &'a FusedMultiHeadAttention,
    pub cross_attention: &'a FusedMultiHeadAttention,
    pub feed_forward: &'a FeedForward,
    pub norm_1: &'a nn::LayerNorm,
    pub norm_2: &'a nn::LayerNorm,
    pub norm_3: &'a nn::LayerNorm,
}

/// The parts of one decoder-only (GPT) block: the four linear maps of its self-attention, how many heads
/// share the width, its two LayerNorms and its feed-forward — without the code that connects them (that
/// is the exercise).
#[derive(Debug)]
pub struct GptBlockParts<'a> {
    pub query: &'a nn::Linear,
    pub key: &'a nn::Linear,
    pub value: &'a nn::Linear,
    pub output: &'a nn::Linear,
    pub heads: i64,
    pub norm_1: &'a nn::LayerNorm,
    pub norm_2: &'a nn::LayerNorm,
    pub feed_forward: &'a FeedForward,
}

impl<'a> GptBlockParts<'a> {
    /// The parts of the crate's own block, borrowed.
    pub fn of(block: &'a crate::gpt::GptBlock) -> Self {
        let attention = &block.self_attention;
        GptBlockParts {
            query: &attention.query,
            key: &attention.key,
            value: &attention.value,
            output: &attention.output,
            heads: attention.num_heads,
            norm_1: &block.self_attention_residual.layer_norm,
            norm_2: &block.feed_forward_residual.layer_norm,
            feed_forward: &block.feed_forward,
        }
    }
}
