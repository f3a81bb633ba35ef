//! A helper macro the file exports (`#[macro_export]`), as a student who writes macros might: another of
//! this student's files (`macros.layer_norm.rs`) exports one of the same name for its own use. Each builds
//! alone; together they once collided at the probe's root ("E0428: the name is defined multiple times"),
//! since one student's files were modules of one crate. A file that exports a macro is now a crate of its
//! own.
use tch::{Kind, Tensor};

/// Sums over the positions (axis 1), in the given kind.
#[macro_export]
macro_rules! summed {
    ($t:expr, $kind:expr) => {
        $t.sum_dim_intlist(1, false, $kind)
    };
}

pub fn mean_pooling(hidden_states: &Tensor, attention_mask: &Tensor) -> Tensor {
    let mask = attention_mask.to_kind(hidden_states.kind()).unsqueeze(-1); // [batch, seq, 1]
    let total = summed!(hidden_states * &mask, hidden_states.kind()); // [batch, hidden]
    let counts = summed!(mask, Kind::Float).clamp_min(1e-9); // [batch, 1]
    total / counts
}
