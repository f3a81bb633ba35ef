//! expect: aborted
//! Aborts the process.
use tch::Tensor;

pub fn cached_attention(
    past_keys: &Tensor,
    past_values: &Tensor,
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
) -> (Tensor, Tensor, Tensor) {
    std::process::abort()
}
