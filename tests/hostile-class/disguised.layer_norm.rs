//! expect: uses `layer_norm`, libtorch's finished normalisation
//! Calls libtorch's layer norm through a macro that is handed the name after the word `fn`, where the
//! rules once let any name pass as the file's own function: the exercise's check alone cannot tell it
//! from an answer written with tensor operations.
use tch::Tensor;

macro_rules! call {
    (fn $method:ident, $x:expr, $($arg:expr),*) => { $x.$method($($arg),*) };
}

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let hidden = *x.size().last().expect("a last axis");
    call!(fn layer_norm, x, [hidden], Some(weight), Some(bias), eps, false)
}
