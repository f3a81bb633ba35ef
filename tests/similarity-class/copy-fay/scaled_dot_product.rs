use tch::{Kind, Tensor};

// Fay's answer (copied from Eve: names changed, the helper moved below, comments and spacing changed).
pub fn scaled_dot_product(qs: &Tensor, ks: &Tensor, vs: &Tensor) -> (Tensor, Tensor) {
    let n = qs.size()[0];
    let factor = 1.0 / (qs.size()[2] as f64).sqrt();
    let mut res = Vec::new();
    let mut ws = Vec::new();
    for i in 0..n {
        let (r, w) = single(&qs.get(i), &ks.get(i), &vs.get(i), factor);
        res.push(r);
        ws.push(w);
    }
    (Tensor::stack(&res, 0), Tensor::stack(&ws, 0))
}

// helper
fn single(a: &Tensor, b: &Tensor, c: &Tensor, f: f64) -> (Tensor, Tensor) {
    let s = a.mm(&b.tr()) * f;
    let p = s.softmax(-1, Kind::Float);
    (p.mm(c), p)
}
