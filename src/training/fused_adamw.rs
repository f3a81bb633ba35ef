//! # AdamW in one pass: LibTorch's fused kernel
//!
//! AdamW moves each parameter by its gradient's running mean over the root of its running square, and
//! shrinks it a little towards zero (the decoupled weight decay). tch's `nn::AdamW` runs LibTorch's C++
//! `torch::optim::AdamW`, which does that as about ten separate operations per parameter, each a pass
//! over memory. LibTorch also has the whole update as one kernel (`_fused_adamw_`, what PyTorch's
//! `AdamW(fused=True)` calls): one pass per parameter. tch does not bind it, so `src/fused_adamw.cpp`
//! does. Same arithmetic, same state: `tests/gpt.rs` holds it to `nn::AdamW` over ten steps. Chapter 11's
//! GPT trains with it.
//!
//! Chapter section: [`chapters/11-gpt.md`](../chapters/11-gpt.md) (training).
use std::ffi::{c_char, c_void, CStr};

use anyhow::{bail, Result};
use tch::nn::VarStore;
use tch::{Kind, Tensor};

/// A LibTorch `at::Tensor`, what tch's `Tensor::as_ptr` points to.
type CTensor = c_void;

extern "C" {
    fn anatomy_fused_adamw_step(
        params: *const *const CTensor,
        exp_avgs: *const *const CTensor,
        exp_avg_sqs: *const *const CTensor,
        steps: *const *const CTensor,
        n: usize,
        lr: f64,
        beta1: f64,
        beta2: f64,
        weight_decay: f64,
        eps: f64,
    ) -> *mut c_char;
    fn anatomy_clip_grad_norm(params: *const *const CTensor, n: usize, max_norm: f64) -> *mut c_char;
    fn anatomy_clear_grads(params: *const *const CTensor, n: usize);
    fn anatomy_free_error(message: *mut c_char);
}

/// LibTorch's message when a call failed.
fn check(message: *mut c_char) -> Result<()> {
    if message.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null result is a NUL-terminated string from strdup, freed once here.
    let text = unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned();
    unsafe { anatomy_free_error(message) };
    let first = text.lines().next().unwrap_or_default();
    bail!("LibTorch's fused AdamW: {first} (make the optimiser after moving or converting the model)")
}

fn pointers(tensors: &[Tensor]) -> Vec<*const CTensor> {
    tensors.iter().map(|t| t.as_ptr().cast()).collect()
}

/// AdamW over the trainable variables a `VarStore` holds when the optimiser is made, with the moment
/// estimates and step counts it keeps between steps. Hyper-parameters as in `tch::nn::AdamW` (`wd` is
/// the decoupled weight decay).
///
/// ```
/// use tch::{nn, Device, Kind};
/// use transformer_anatomy::training::FusedAdamW;
///
/// let vs = nn::VarStore::new(Device::Cpu);
/// let w = vs.root().ones("w", &[2]);
/// let mut adamw = FusedAdamW::new(&vs, nn::AdamW { wd: 0.01, ..nn::AdamW::default() }, 0.1).unwrap();
/// adamw.zero_grad();
/// (&w * &w * 50.0).sum(Kind::Float).backward(); // gradient 100 per weight
/// adamw.step().unwrap();
/// // Adam's first step is the learning rate whatever the gradient's size (1 - 0.1), after the decay
/// // has shrunk the weight by lr × wd (× 0.999).
/// let w = Vec::<f32>::try_from(&w).unwrap();
/// assert!(w.iter().all(|&x| (x - (0.999 - 0.1)).abs() < 1e-6), "{w:?}");
/// ```
#[derive(Debug)]
pub struct FusedAdamW {
    params: Vec<Tensor>,
    exp_avgs: Vec<Tensor>,
    exp_avg_sqs: Vec<Tensor>,
    steps: Vec<Tensor>,
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub wd: f64,
    pub eps: f64,
}

impl FusedAdamW {
    /// `config` gives β₁, β₂, the weight decay and ε (`amsgrad` is not supported).
    pub fn new(vs: &VarStore, config: tch::nn::AdamW, lr: f64) -> Result<Self> {
        if config.amsgrad {
            bail!("the fused AdamW has no AMSGrad variant: use tch's nn::AdamW for amsgrad");
        }
        let params = vs.trainable_variables();
        let zeros = || params.iter().map(Tensor::zeros_like).collect::<Vec<_>>();
        // As PyTorch does for the fused kernel: each parameter's step count, a float scalar on its device.
        let steps = params.iter().map(|p| Tensor::zeros([], (Kind::Float, p.device()))).collect();
        let (exp_avgs, exp_avg_sqs) = (zeros(), zeros());
        let tch::nn::AdamW { beta1, beta2, wd, eps, .. } = config;
        Ok(FusedAdamW { params, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2, wd, eps })
    }

    pub fn set_lr(&mut self, lr: f64) {
        self.lr = lr;
    }

    /// Forgets the gradients before the next backward pass (PyTorch's `zero_grad(set_to_none=True)`).
    pub fn zero_grad(&mut self) {
        let params = pointers(&self.params);
        // SAFETY: the pointers are live tensors of `self.params` for the duration of the call.
        unsafe { anatomy_clear_grads(params.as_ptr(), params.len()) }
    }

    /// Scales all gradients together so that their joint L2 norm is at most `max_norm`.
    pub fn clip_grad_norm(&self, max_norm: f64) -> Result<()> {
        let params = pointers(&self.params);
        // SAFETY: as in `zero_grad`.
        check(unsafe { anatomy_clip_grad_norm(params.as_ptr(), params.len(), max_norm) })
    }

    /// Updates every parameter that has a gradient, in place.
    pub fn step(&mut self) -> Result<()> {
        let [params, exp_avgs, exp_avg_sqs, steps] =
            [&self.params, &self.exp_avgs, &self.exp_avg_sqs, &self.steps].map(|t| pointers(t));
        let Self { lr, beta1, beta2, wd, eps, .. } = *self;
        // SAFETY: four lists of the same length, of live tensors owned by `self`.
        check(unsafe {
            anatomy_fused_adamw_step(
                params.as_ptr(),
                exp_avgs.as_ptr(),
                exp_avg_sqs.as_ptr(),
                steps.as_ptr(),
                params.len(),
                lr,
                beta1,
                beta2,
                wd,
                eps,
            )
        })
    }
}
