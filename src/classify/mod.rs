//! # Chapter 12: the body and a head on a real task (a spam filter)
//!
//! Chapter 07 put a classification head on the encoder and stopped where its weights were random. This
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

/// What moved the decision on one text: its word pieces with their weights, strongest towards `label`
/// first (special tokens left out), and — with mean pooling — what else the logit difference holds.
#[derive(Debug, Clone)]
pub struct Shares {
    pub tokens: Vec<(String, f64)>,
    /// The shares of `[CLS]` and `[SEP]` together, signed as the tokens are (0 with `[CLS]` pooling):
    /// part of the mean, but not words of the message.
    pub special: f64,
}

/// The tokens of `text` that moved the decision most ([`Shares`]). `direction` `[hidden]` is what the
/// head multiplies a pooled vector by to get the spam logit minus the ham logit. With mean pooling the
/// split is exact: that difference is the mean of each token's `hᵢ · direction`, plus the head's constant
/// (see [`checkpoint::Loaded::constant`]), so each token's share is `hᵢ · direction / n` (positive:
/// towards spam; the list is signed and sorted towards `label`), computed in double precision. With
/// `[CLS]` pooling no such split exists, and the weights are the last layer's attention from `[CLS]` to
/// each token, averaged over the heads: where the summary looked.
pub fn tokens_that_mattered(
    model: &crate::BertModel,
    tokenizer: &crate::Tokenizer,
    text: &str,
    max_len: usize,
    pooling: Pooling,
    direction: &Tensor,
    label: usize,
) -> anyhow::Result<Shares> {
    let ids = features::token_ids(tokenizer, text, max_len)?;
    let n = ids.len() as i64;
    let input = Tensor::from_slice(&ids).view([1, n]).to_device(model.vs.device());
    let _no_grad = tch::no_grad_guard();
    let out = model.encoder.try_forward(&input, None, None, crate::Pass::WEIGHTS)?;
    let weights = match pooling {
        Pooling::Mean => {
            let hidden = out.last_hidden_state.get(0).to_kind(Kind::Double); // [n, h]
            let share = hidden.matmul(&direction.to_kind(Kind::Double)) / n as f64; // [n]
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
    let mut tokens = Vec::new();
    let mut special = 0.0;
    // `token_ids` puts [CLS] first and [SEP] last; any other piece, [UNK] included, is the message's.
    let last = ids.len() - 1;
    for (i, (&id, w)) in ids.iter().zip(weights).enumerate() {
        match (i == 0 || i == last, tokenizer.id_to_token(id)) {
            (true, _) if pooling == Pooling::Mean => special += w,
            (true, _) | (false, None) => {}
            (false, Some(token)) => tokens.push((token, w)),
        }
    }
    tokens.sort_by(|a, b| b.1.total_cmp(&a.1));
    Ok(Shares { tokens, special })
}
