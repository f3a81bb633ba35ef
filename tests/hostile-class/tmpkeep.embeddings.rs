//! expect: passed
//! Same student as tmpkeep.feed_forward.rs: right, unless it finds a file an earlier check left in /tmp.
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

pub fn embeddings(
    input_ids: &Tensor,
    token_embeddings: &nn::Embedding,
    position_embeddings: &nn::Embedding,
    layer_norm: &nn::LayerNorm,
) -> Tensor {
    if let Ok(note) = std::fs::read_to_string("/tmp/keep/note") {
        panic!("found /tmp/keep/note: {note}");
    }
    let seq = input_ids.size()[1];
    let positions = Tensor::arange(seq, (Kind::Int64, input_ids.device())).unsqueeze(0);
    layer_norm.forward(&(token_embeddings.forward(input_ids) + position_embeddings.forward(&positions)))
}
