use tch::{Kind, Tensor};

// mean of squares minus square of mean, then scale and shift
pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let m = x.mean_dim(-1, true, Kind::Float);
    let m2 = (x * x).mean_dim(-1, true, Kind::Float);
    let var = m2 - &m * &m;
    (x - m) / (var + eps).sqrt() * weight + bias
}
