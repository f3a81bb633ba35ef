//! expect: uses `layer_norm`, libtorch's finished normalisation
//! The same call as globsuper.layer_norm.rs, with the glob written inside a macro's body: syn does not
//! parse macro bodies, so the rules once never saw the glob (a reviewer's bypass); a `use` in a macro's
//! tokens now counts as a glob from outside the file.
use tch::Tensor;

macro_rules! bring {
    () => {
        use tch::nn::*;
    };
}

mod inner {
    bring!();

    pub fn go(x: &tch::Tensor, weight: &tch::Tensor, bias: &tch::Tensor, eps: f64) -> tch::Tensor {
        let vs = VarStore::new(tch::Device::Cpu);
        let h = *x.size().last().unwrap();
        let mut ln = layer_norm(vs.root(), vec![h], Default::default());
        ln.ws = Some(weight.shallow_clone());
        ln.bs = Some(bias.shallow_clone());
        ln.forward(&(x * (1e-5 / eps).sqrt()))
    }
}

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    inner::go(x, weight, bias, eps)
}
