//! Reference solution (see `exercises/split_heads.rs` for the task).
use tch::Tensor;

pub fn split_heads(x: &Tensor, num_heads: i64) -> Tensor {
    let (batch, seq, hidden) = x.size3().expect("[batch, seq, hidden]");
    x.view([batch, seq, num_heads, hidden / num_heads]) // [batch, seq, heads, head_dim]
        .transpose(1, 2) // [batch, heads, seq, head_dim]
}

pub fn merge_heads(x: &Tensor) -> Tensor {
    let (batch, heads, seq, head_dim) = x.size4().expect("[batch, heads, seq, head_dim]");
    x.transpose(1, 2) // [batch, seq, heads, head_dim]
        .contiguous()
        .view([batch, seq, heads * head_dim])
}
