//! # Chapter 12: the body and a head on a real task (a spam filter)
//!
//! Section 7 put a classification head on the encoder and stopped where its weights were random. This
//! part gives the head a task: SpamAssassin's public corpus ([`data`]), MiniLM's encoder as the body,
//! and a sentence vector pooled from its last hidden state ([`pool`]) as what the head reads.
pub mod checkpoint;
pub mod data;
pub mod features;
pub mod fine_tune;
pub mod frozen;
pub mod run;
pub mod sampler;

use tch::{Kind, Tensor};

/// How a sequence of hidden states becomes one vector per text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// The hidden state of the first token, `[CLS]`: what BERT's pre-training asked to summarise the
    /// text, and what the book's head reads. all-MiniLM-L6-v2 was never trained to put a summary there.
    Cls,
    /// The mean over the real tokens (padding left out): what all-MiniLM-L6-v2 was trained to produce
    /// (its sentence-transformers configuration pools by the mean), before its length-1 scaling.
    Mean,
}

/// One vector per text: `[batch, seq, h]` (and the padding mask `[batch, seq]`) → `[batch, h]`.
pub fn pool(hidden: &Tensor, mask: &Tensor, pooling: Pooling) -> Tensor {
    match pooling {
        Pooling::Cls => hidden.select(1, 0), // [batch, h]
        Pooling::Mean => crate::pooling::masked_mean(hidden, mask),
    }
}

/// The tokens of `text` that moved the decision most, strongest first, with their weights (special
/// tokens left out). `direction` `[hidden]` is what the head multiplies a pooled vector by to get the
/// spam logit minus the ham logit. With mean pooling the answer is exact: that difference is the mean of
/// each token's `hᵢ · direction`, so each token's share is `hᵢ · direction / n` (positive: towards spam);
/// the list is sorted towards `label`. With `[CLS]` pooling no such split exists, and the weights are the
/// last layer's attention from `[CLS]` to each token, averaged over the heads: where the summary looked.
pub fn tokens_that_mattered(
    model: &crate::BertModel,
    tokenizer: &crate::Tokenizer,
    text: &str,
    max_len: usize,
    pooling: Pooling,
    direction: &Tensor,
    label: usize,
) -> anyhow::Result<Vec<(String, f64)>> {
    let ids = features::token_ids(tokenizer, text, max_len)?;
    let n = ids.len() as i64;
    let input = Tensor::from_slice(&ids).view([1, n]).to_device(model.vs.device());
    let _no_grad = tch::no_grad_guard();
    let out = model.encoder.try_forward(&input, None, None, crate::Pass::WEIGHTS)?;
    let weights = match pooling {
        Pooling::Mean => {
            let hidden = out.last_hidden_state.get(0); // [n, h]
            let share = hidden.matmul(&direction.to_kind(hidden.kind())) / n as f64; // [n]
            if label == 1 {
                share
            } else {
                -share
            }
        }
        Pooling::Cls => {
            let last = out.attentions.last().ok_or_else(|| anyhow::anyhow!("the model has no layer"))?;
            last.get(0).mean_dim(0, false, Kind::Float).get(0) // [n]: row of [CLS], heads averaged
        }
    };
    let weights = Vec::<f64>::try_from(&weights.to_kind(Kind::Double).to_device(tch::Device::Cpu))?;
    let mut found: Vec<(String, f64)> = ids
        .iter()
        .zip(weights)
        .filter_map(|(&id, w)| {
            let token = tokenizer.id_to_token(id)?;
            (!(token.starts_with('[') && token.ends_with(']'))).then_some((token, w))
        })
        .collect();
    found.sort_by(|a, b| b.1.total_cmp(&a.1));
    Ok(found)
}
