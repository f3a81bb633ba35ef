//! expect: builds an attribute from a macro's input
//! The right answer, plus a function exported as the C library's `free` by an attribute whose name a
//! macro is handed: the rules once read only the names written inside `#[…]`.
use tch::{Device, Kind, Tensor};

macro_rules! exported {
    ($attribute:ident) => {
        #[$attribute]
        pub fn free(_pointer: usize) {}
    };
}
exported!(no_mangle);

pub fn causal_mask(n: i64, device: Device) -> Tensor {
    Tensor::ones([n, n], (Kind::Float, device)).tril(0)
}

pub fn masked_softmax(scores: &Tensor, mask: &Tensor) -> Tensor {
    scores.masked_fill(&mask.eq(0), f64::NEG_INFINITY).softmax(-1, scores.kind())
}
