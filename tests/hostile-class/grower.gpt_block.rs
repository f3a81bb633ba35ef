//! expect: used more than its 2 GiB of memory and was stopped
//! mistake: out_of_memory
//! Keeps 64 MiB blocks, each written through, until it is stopped: the grader watches its memory and stops
//! it at the limit, and says so from what it saw.
use tch::Tensor;

pub use transformer_anatomy::exercises::support::GptBlockParts;

pub fn gpt_block(x: &Tensor, parts: &GptBlockParts) -> Tensor {
    let mut kept: Vec<Vec<u8>> = Vec::new();
    loop {
        kept.push(vec![7u8; 64 << 20]);
        std::hint::black_box(&kept);
    }
}
