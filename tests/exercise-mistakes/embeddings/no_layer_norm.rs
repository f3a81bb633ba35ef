//! A plausible wrong answer to `embeddings`; the grader must fail it.
//! expect: no layer norm
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

pub fn embeddings(ids: &Tensor, tokens: &nn::Embedding, positions: &nn::Embedding, norm: &nn::LayerNorm) -> Tensor {
    let seq = ids.size()[1];
    let pos = Tensor::arange(seq, (Kind::Int64, ids.device())).unsqueeze(0);
    tokens.forward(ids) + positions.forward(&pos)
}
