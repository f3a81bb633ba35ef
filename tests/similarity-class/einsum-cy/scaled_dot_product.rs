use tch::{Kind, Tensor};

pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {
    let scale = 1.0 / (query.size()[2] as f64).sqrt();
    let logits = Tensor::einsum("btd,bsd->bts", &[query, key], None::<i64>) * scale;
    let probabilities = logits.softmax(2, Kind::Float);
    let mixed = Tensor::einsum("bts,bsv->btv", &[&probabilities, value], None::<i64>);
    (mixed, probabilities)
}
