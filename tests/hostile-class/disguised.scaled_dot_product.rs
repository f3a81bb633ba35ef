//! expect: uses `#[export_name]`, which changes what the linker sees
//! The right answer, plus a function exported under the C library's `free` behind `cfg_attr`, whose
//! condition always holds: the rules once read only an attribute's first name.
use tch::{Kind, Tensor};

#[cfg_attr(all(), export_name = "free")]
pub fn release(_pointer: usize) {}

pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {
    let d = *query.size().last().expect("a last axis") as f64;
    let scores = query.bmm(&key.transpose(1, 2)) / d.sqrt(); // [batch, t, s]
    let weights = scores.softmax(-1, Kind::Float);
    (weights.bmm(value), weights)
}
