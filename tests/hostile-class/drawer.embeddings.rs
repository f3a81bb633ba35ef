//! expect: passed
//! Answers right, and leaves a thread behind that draws from LibTorch's random generator for as long as the
//! process lives. When every check shared one process, the checks after this one drew other inputs than the
//! judge did, and the same student's correct files failed; now the thread dies with this check's process.
use tch::nn::{self, Module};
use tch::{Device, Kind, Tensor};

pub fn embeddings(
    input_ids: &Tensor,
    token_embeddings: &nn::Embedding,
    position_embeddings: &nn::Embedding,
    layer_norm: &nn::LayerNorm,
) -> Tensor {
    let seq = input_ids.size()[1];
    let positions = Tensor::arange(seq, (Kind::Int64, input_ids.device())).unsqueeze(0);
    let out = layer_norm.forward(&(token_embeddings.forward(input_ids) + position_embeddings.forward(&positions)));
    std::thread::spawn(|| loop {
        let _ = Tensor::randn([64], (Kind::Float, Device::Cpu));
        std::thread::sleep(std::time::Duration::from_micros(50));
    });
    out
}
