use tch::{Kind, Tensor};

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    // variance from the mean of the squares
    let mu = x.mean_dim(-1, true, Kind::Float);
    let var = (x * x).mean_dim(-1, true, Kind::Float) - &mu * &mu;
    (x - mu) / (var + eps).sqrt() * weight + bias
}
