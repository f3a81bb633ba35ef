use tch::{Kind, Tensor};

// Copied from loop-eve, then disguised: the scale in a helper of its own, statements split into
// temporaries, and code that is never used.
fn inverse_root(d: i64) -> f64 {
    let as_float = d as f64;
    let root = as_float.sqrt();
    1.0 / root
}

fn unused_check(t: &Tensor) -> bool {
    let dims = t.dim();
    dims == 3
}

fn attend_one(q: &Tensor, k: &Tensor, v: &Tensor, scale: f64) -> (Tensor, Tensor) {
    let kt = k.tr();
    let raw = q.mm(&kt);
    let scores = raw * scale;
    let weights = scores.softmax(-1, Kind::Float);
    let out = weights.mm(v);
    (out, weights)
}

pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {
    let sizes = query.size();
    let batch = sizes[0];
    let scale = inverse_root(sizes[2]);
    let mut outputs = Vec::new();
    let mut all_weights = Vec::new();
    let mut b = 0;
    while b < batch {
        let q = query.get(b);
        let k = key.get(b);
        let v = value.get(b);
        let (out, weights) = attend_one(&q, &k, &v, scale);
        outputs.push(out);
        all_weights.push(weights);
        b += 1;
    }
    let stacked = Tensor::stack(&outputs, 0);
    (stacked, Tensor::stack(&all_weights, 0))
}
