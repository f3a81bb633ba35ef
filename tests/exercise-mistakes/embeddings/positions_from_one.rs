//! A plausible wrong answer to `embeddings`; the grader must fail it.
//! expect: start at 1
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

pub fn embeddings(ids: &Tensor, tokens: &nn::Embedding, positions: &nn::Embedding, norm: &nn::LayerNorm) -> Tensor {
    let seq = ids.size()[1];
    let pos = Tensor::arange_start(1, seq + 1, (Kind::Int64, ids.device())).unsqueeze(0);
    norm.forward(&(tokens.forward(ids) + positions.forward(&pos)))
}
