//! expect: No such file or directory
//! expect-landlock: Permission denied
//! Writes a file outside its own folder before answering.
use tch::Tensor;

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    std::fs::write("{{OUTSIDE}}/written-by-a-student", "pwned").unwrap();
    let mean = x.mean_dim(-1, true, tch::Kind::Float);
    let centred = x - &mean;
    let variance = (&centred * &centred).mean_dim(-1, true, tch::Kind::Float);
    centred / (variance + eps).sqrt() * weight + bias
}
