//! expect: No such file or directory
//! Writes a file outside its own folder before answering.
use tch::Tensor;

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    std::fs::write("{{OUTSIDE}}/written-by-a-student", "pwned").unwrap();
    x.layer_norm([x.size()[x.dim() - 1]], Some(weight), Some(bias), eps, false)
}
