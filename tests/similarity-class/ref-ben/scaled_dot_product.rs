use tch::{Kind, Tensor};

/// Ben's attention.
pub fn scaled_dot_product(queries: &Tensor, keys: &Tensor, values: &Tensor) -> (Tensor, Tensor) {
    let width = *queries.size().last().expect("a last axis") as f64;
    let logits = queries.bmm(&keys.transpose(1, 2)) / width.sqrt(); // [b, t, s]
    let attn = logits.softmax(-1, Kind::Float);
    (attn.bmm(values), attn)
}
