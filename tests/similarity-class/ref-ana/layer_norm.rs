use tch::{Kind, Tensor};

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let m = x.mean_dim(-1, true, Kind::Float);
    let c = x - &m;
    let v = (&c * &c).mean_dim(-1, true, Kind::Float);
    c / (v + eps).sqrt() * weight + bias
}
