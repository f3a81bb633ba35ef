//! A plausible wrong answer to `embeddings`; the grader must fail it.
//! expect: before the position embeddings are added
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

pub fn embeddings(ids: &Tensor, tokens: &nn::Embedding, positions: &nn::Embedding, norm: &nn::LayerNorm) -> Tensor {
    let seq = ids.size()[1];
    let pos = Tensor::arange(seq, (Kind::Int64, ids.device())).unsqueeze(0);
    norm.forward(&tokens.forward(ids)) + positions.forward(&pos)
}
