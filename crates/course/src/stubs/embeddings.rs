//! # Exercise: token and position embeddings
//!
//! Attention alone does not know word order. BERT adds a *learned* position embedding to each token's
//! embedding: the vector of row `i` of the position table goes to the token at position `i`. The sum
//! then goes through one layer norm.
//!
//! * `input_ids`: `[batch, seq]` token ids;
//! * `token_embeddings`, `position_embeddings`: `tch::nn::Embedding` tables (look ids up with `.forward`);
//! * `layer_norm`: the layer norm to apply to the sum;
//! * return `[batch, seq, hidden]`. Evaluation mode: no dropout.
//!
//! Chapter: `chapters/06-positional-embeddings.md`.
//! Check: `cargo anatomy exercises check embeddings`; hints: `exercises/hints/embeddings.md`.
#![allow(unused_variables)] // remove once the body is written
use tch::nn;
use tch::Tensor;

pub fn embeddings(
    input_ids: &Tensor,
    token_embeddings: &nn::Embedding,
    position_embeddings: &nn::Embedding,
    layer_norm: &nn::LayerNorm,
) -> Tensor {
    todo!("token embeddings + position embeddings, then layer norm")
}
