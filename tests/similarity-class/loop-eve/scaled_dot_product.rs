use tch::{Kind, Tensor};

/// One sequence of the batch at a time: its scores, weights and output.
fn attend_one(q: &Tensor, k: &Tensor, v: &Tensor, scale: f64) -> (Tensor, Tensor) {
    let scores = q.mm(&k.tr()) * scale;
    let weights = scores.softmax(-1, Kind::Float);
    (weights.mm(v), weights)
}

pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {
    let batch = query.size()[0];
    let scale = 1.0 / (query.size()[2] as f64).sqrt();
    let mut outputs = Vec::new();
    let mut all_weights = Vec::new();
    for b in 0..batch {
        let (out, weights) = attend_one(&query.get(b), &key.get(b), &value.get(b), scale);
        outputs.push(out);
        all_weights.push(weights);
    }
    (Tensor::stack(&outputs, 0), Tensor::stack(&all_weights, 0))
}
