use tch::{Kind, Tensor};

// mean, deviations, biased variance
pub fn layer_norm(input: &Tensor, gamma: &Tensor, beta: &Tensor, epsilon: f64) -> Tensor {
    let mu = input.mean_dim(-1, true, Kind::Float);
    let dev = input - &mu;
    let var = (&dev * &dev).mean_dim(-1, true, Kind::Float);
    dev / (var + epsilon).sqrt() * gamma + beta
}
