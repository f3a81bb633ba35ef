//! A plausible wrong answer to `scaled_dot_product`; the grader must fail it.
//! expect: transpose the keys
use tch::{Kind, Tensor};

pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {
    let d = *query.size().last().unwrap() as f64;
    let weights = (query.bmm(key) / d.sqrt()).softmax(-1, Kind::Float);
    (weights.bmm(value), weights)
}
