//! expect: uses `layer_norm`, libtorch's finished normalisation
//! Reaches tch::nn::layer_norm through a glob whose path starts with `super`, which the rules once took for
//! a glob of the file's own (a reviewer's bypass). `nn` is tch's module,
//! imported without a glob; `layer_norm` is "the file's own" because the exercise's fn is named so, and the
//! call below is a plain use (no `.`/`::` before it, not in a use item, not in a macro).
use tch::nn;
use tch::Tensor;

mod inner {
    use super::nn::*; // = tch::nn::*: LayerNorm, its config, Module, VarStore, layer_norm(...)

    pub fn go(x: &tch::Tensor, weight: &tch::Tensor, bias: &tch::Tensor, eps: f64) -> tch::Tensor {
        let vs = VarStore::new(tch::Device::Cpu);
        let h = *x.size().last().unwrap();
        let mut ln = layer_norm(vs.root(), vec![h], Default::default()); // tch's, not the file's
        ln.ws = Some(weight.shallow_clone());
        ln.bs = Some(bias.shallow_clone());
        // tch's config has eps 1e-5: LN_1e-5(c·x) = LN_eps(x) with c = sqrt(1e-5 / eps).
        ln.forward(&(x * (1e-5 / eps).sqrt()))
    }
}

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    inner::go(x, weight, bias, eps)
}
