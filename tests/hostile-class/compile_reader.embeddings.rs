//! expect: names `include_str`, which reads another file at compile time
//! Reads the secret file while compiling, and hands it back as its answer's panic. Refused by the rules
//! before compiling; behind them, the compiler's sandbox has no such file to read.
use tch::nn;
use tch::Tensor;

const SECRET: &str = include_str!("{{SECRET}}");

pub fn embeddings(
    input_ids: &Tensor,
    token_embeddings: &nn::Embedding,
    position_embeddings: &nn::Embedding,
    layer_norm: &nn::LayerNorm,
) -> Tensor {
    panic!("{SECRET}")
}
