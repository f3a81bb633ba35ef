use tch::{Kind, Tensor};

// The softmax written out: subtract the row's largest score, exponentiate, divide by the row's sum.
pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {
    let dims = query.size();
    let head = dims[dims.len() - 1];
    let raw = query.matmul(&key.transpose(-2, -1)).divide_scalar((head as f64).sqrt());
    let (top, _) = raw.max_dim(-1, true);
    let e = (raw - top).exp();
    let total = e.sum_dim_intlist(-1, true, Kind::Float);
    let w = e / total;
    let out = w.matmul(value);
    (out, w)
}
