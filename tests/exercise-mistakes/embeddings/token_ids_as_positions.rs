//! A plausible wrong answer to `embeddings`; the grader must fail it.
//! expect: token ids are used as positions
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

pub fn embeddings(ids: &Tensor, tokens: &nn::Embedding, positions: &nn::Embedding, norm: &nn::LayerNorm) -> Tensor {
    let seq = ids.size()[1];
    norm.forward(&(tokens.forward(ids) + positions.forward(ids)))
}
