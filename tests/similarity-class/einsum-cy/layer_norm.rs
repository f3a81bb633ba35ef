use tch::{Kind, Tensor};

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let hidden = x.size()[2];
    let flat = x.reshape([-1, hidden]);
    let centred = &flat - flat.mean_dim(1, true, Kind::Float);
    let spread = centred.square().mean_dim(1, true, Kind::Float).g_add_scalar(eps).sqrt();
    let normed = (centred / spread).reshape(x.size());
    normed * weight + bias
}
