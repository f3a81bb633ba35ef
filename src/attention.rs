//! # One attention call for every kind of attention
//!
//! Self-attention, masked self-attention and encoder-decoder attention are one operation with different
//! inputs: queries come from one sequence, keys and values from another (the same one, for
//! self-attention), and a mask says which pairs may meet. So every multi-head attention in this crate,
//! the chapter's per-head [`MultiHeadAttention`](crate::MultiHeadAttention) and the
//! [`FusedMultiHeadAttention`](crate::FusedMultiHeadAttention), answers the one call of the
//! [`Attention`] trait, and returns its weights only when a [`Pass`] asks for them (pictures want them,
//! training does not).
//!
//! Chapter sections: [`chapters/03-multi-head-attention.md`](../chapters/03-multi-head-attention.md) and
//! [`chapters/08-decoder-and-masking.md`](../chapters/08-decoder-and-masking.md).
use anyhow::{ensure, Result};
use tch::Tensor;

/// How a forward pass runs: with dropout (`train`) or without, and whether the attention weights are
/// kept for a picture or a test (`weights`). Attention takes a `Pass` (`Pass::EVAL`, `Pass::TRAIN`,
/// `Pass::WEIGHTS`); the layers above it also take a plain `bool`, which converts to a pass without
/// weights. For plain self-attention without a mask, every attention module is also a
/// [`tch::nn::ModuleT`]: `attention.forward_t(&x, false)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pass {
    /// Dropout on (training) or off (evaluation).
    pub train: bool,
    /// Return the attention weights as well.
    pub weights: bool,
}

impl Pass {
    /// Evaluation: no dropout, no weights.
    pub const EVAL: Pass = Pass { train: false, weights: false };
    /// Training: dropout on, no weights.
    pub const TRAIN: Pass = Pass { train: true, weights: false };
    /// Evaluation that also returns the attention weights.
    pub const WEIGHTS: Pass = Pass { train: false, weights: true };
}

impl From<bool> for Pass {
    /// `true` trains, `false` evaluates; neither keeps the weights.
    fn from(train: bool) -> Self {
        Pass { train, weights: false }
    }
}

/// What an attention call returns.
#[derive(Debug)]
pub struct AttentionOutput {
    /// `[batch, s_q, hidden]`: one new vector per query position.
    pub output: Tensor,
    /// `[batch, heads, s_q, s_k]`, when the [`Pass`] asked for them: each row sums to 1 (or is all 0 for
    /// a query that may see nothing).
    pub weights: Option<Tensor>,
}

/// Multi-head attention, in whichever implementation. The trait can be used generically or as an object
/// (`&dyn Attention`), which is how an encoder layer holds either implementation.
pub trait Attention: std::fmt::Debug {
    /// Queries from `query_input` `[batch, s_q, hidden]`, keys and values from `key_value_input`
    /// `[batch, s_k, hidden]` (pass the same tensor twice for self-attention). `mask` (1 = may attend,
    /// 0 = blocked) broadcasts against `[batch, s_q, s_k]`: a causal `[s_q, s_k]` or a padding
    /// `[batch, 1, s_k]` mask. Unchecked: for inputs from outside, use [`Attention::try_forward`].
    fn forward(
        &self,
        query_input: &Tensor,
        key_value_input: &Tensor,
        mask: Option<&Tensor>,
        pass: Pass,
    ) -> AttentionOutput;

    /// The hidden size the block reads and writes.
    fn hidden_size(&self) -> i64;

    /// How many heads the block has.
    fn num_heads(&self) -> i64;

    /// [`Attention::forward`] after checking the inputs' shapes, so that a wrong input is an error that
    /// says what was expected rather than a LibTorch abort.
    fn try_forward(
        &self,
        query_input: &Tensor,
        key_value_input: &Tensor,
        mask: Option<&Tensor>,
        pass: Pass,
    ) -> Result<AttentionOutput> {
        check_inputs(query_input, key_value_input, mask, self.hidden_size())?;
        Ok(self.forward(query_input, key_value_input, mask, pass))
    }
}

/// Checks what an attention block is given: both inputs `[batch, seq, hidden]` with the block's hidden
/// size and the same batch, and a mask that broadcasts against `[batch, s_q, s_k]`.
pub fn check_inputs(query_input: &Tensor, key_value_input: &Tensor, mask: Option<&Tensor>, hidden: i64) -> Result<()> {
    let (q, kv) = (query_input.size(), key_value_input.size());
    for (name, size) in [("the query input", &q), ("the key/value input", &kv)] {
        ensure!(
            size.len() == 3 && size[2] == hidden,
            "{name} has shape {size:?}, but attention takes [batch, seq, {hidden}]: add a batch axis with \
             unsqueeze(0) or check the hidden size"
        );
    }
    ensure!(q[0] == kv[0], "the query input's batch ({}) and the key/value input's ({}) differ", q[0], kv[0]);
    if let Some(mask) = mask {
        let target = [q[0], q[1], kv[1]];
        ensure!(
            broadcasts_to(&mask.size(), &target),
            "the mask of shape {:?} does not broadcast to [batch, s_q, s_k] = {target:?}",
            mask.size()
        );
    }
    Ok(())
}

/// True when a tensor of shape `shape` broadcasts to `target` without growing `target`.
pub fn broadcasts_to(shape: &[i64], target: &[i64]) -> bool {
    shape.len() <= target.len() && shape.iter().rev().zip(target.iter().rev()).all(|(&a, &b)| a == 1 || a == b)
}
