//! A plausible wrong answer to `scaled_dot_product`; the grader must fail it.
//! expect: the square root of another axis
use tch::{Kind, Tensor};

pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {
    // Axis 1 is d in a [t, d] matrix; with the batch in front it is t.
    let d = query.size()[1] as f64;
    let weights = (query.bmm(&key.transpose(1, 2)) / d.sqrt()).softmax(-1, Kind::Float);
    (weights.bmm(value), weights)
}
