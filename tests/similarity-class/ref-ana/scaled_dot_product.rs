// Ana: the chapter's steps, one line each.
use tch::{Kind, Tensor};

pub fn scaled_dot_product(q: &Tensor, k: &Tensor, v: &Tensor) -> (Tensor, Tensor) {
    let dk = *q.size().last().expect("a last axis") as f64;
    let s = q.bmm(&k.transpose(1, 2)) / dk.sqrt();
    let w = s.softmax(-1, Kind::Float);
    (w.bmm(v), w)
}
