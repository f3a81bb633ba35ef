//! # Inference mode: evaluation without autograd's bookkeeping
//!
//! `tch::no_grad_guard` stops LibTorch from recording a graph for gradients, but every operation still
//! passes through autograd's layer, which tracks views and bumps version counters in case a gradient is
//! wanted later. LibTorch's *inference mode* skips that layer altogether. On big tensors the difference
//! is lost in the arithmetic; when a decoder writes one token at a time, each step is about a hundred
//! operations on vectors of a few dozen numbers, and the bookkeeping is a fifth of the step's time.
//! PyTorch offers it as `torch.inference_mode()`; tch 0.26 does not (tch-rs issue #977), so
//! `src/inference_mode.cpp` does, in two C functions that this guard calls.
//!
//! Tensors made inside are *inference tensors*. Reading them afterwards is fine, and so is any operation
//! that makes a new tensor from them; changing one in place, or using one where autograd must keep it for
//! a backward pass (the ids of a training batch, say), fails outside the mode. The decoders here keep
//! that inside: what they return is read, never trained on.
//!
//! Chapter section: [`chapters/10-training.md`](../chapters/10-training.md) (decoding with a cache).
use std::ffi::c_void;

extern "C" {
    fn anatomy_inference_mode_enter() -> *mut c_void;
    fn anatomy_inference_mode_exit(guard: *mut c_void);
    fn anatomy_grad_enabled() -> bool;
}

/// Whether LibTorch records operations for gradients on this thread right now: false under
/// `tch::no_grad` and in inference mode. (tch can turn the mode off and on but cannot ask it.)
pub fn grad_enabled() -> bool {
    // SAFETY: reads a thread-local flag.
    unsafe { anatomy_grad_enabled() }
}

/// While this guard lives, the current thread runs LibTorch in inference mode (which also turns
/// gradients off). Guards nest; each restores the mode it found. It cannot leave its thread: the mode is
/// the thread's own.
///
/// ```
/// use tch::{Kind, Tensor};
/// use transformer_anatomy::inference_mode::inference_mode_guard;
///
/// let w = Tensor::ones([2], (Kind::Float, tch::Device::Cpu)).set_requires_grad(true);
/// let y = {
///     let _guard = inference_mode_guard();
///     &w * 3.0 // no graph, no bookkeeping
/// };
/// assert!(y.is_inference() && !y.requires_grad());
/// assert_eq!(Vec::<f32>::try_from(&y).unwrap(), [3.0, 3.0]);
/// assert!(!(&w * 3.0).is_inference()); // the guard is gone: back to normal tensors
/// ```
#[must_use = "inference mode ends when the guard is dropped"]
pub struct InferenceModeGuard {
    raw: *mut c_void, // a c10::InferenceMode; the raw pointer also keeps the guard on its thread (!Send)
}

/// Enters inference mode until the returned guard is dropped.
pub fn inference_mode_guard() -> InferenceModeGuard {
    // SAFETY: the function allocates a guard object and returns it; only `drop` below frees it.
    InferenceModeGuard { raw: unsafe { anatomy_inference_mode_enter() } }
}

impl Drop for InferenceModeGuard {
    fn drop(&mut self) {
        // SAFETY: `raw` came from `anatomy_inference_mode_enter` on this thread and is freed once.
        unsafe { anatomy_inference_mode_exit(self.raw) }
    }
}

impl std::fmt::Debug for InferenceModeGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InferenceModeGuard")
    }
}
