//! A plausible wrong answer to `embeddings`; the grader must fail it.
//! expect: position ids must be integers
//! mistake: unnamed
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

pub fn embeddings(ids: &Tensor, tokens: &nn::Embedding, positions: &nn::Embedding, norm: &nn::LayerNorm) -> Tensor {
    let seq = ids.size()[1];
    // The kind copied from the other tensors of the chapter.
    let pos = Tensor::arange(seq, (Kind::Float, ids.device())).unsqueeze(0);
    norm.forward(&(tokens.forward(ids) + positions.forward(&pos)))
}
