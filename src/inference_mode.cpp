// LibTorch's inference mode for Rust: tch 0.26 exposes `no_grad` but not `c10::InferenceMode`
// (tch-rs issue #977), so these two functions do, and src/inference_mode.rs wraps them in a guard.
// build.rs compiles this file against the headers of the LibTorch that tch links.
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>

extern "C" void *anatomy_inference_mode_enter() {
    return new c10::InferenceMode(true);
}

extern "C" void anatomy_inference_mode_exit(void *guard) {
    delete static_cast<c10::InferenceMode *>(guard);
}

// Whether LibTorch records operations for gradients on this thread (off under no_grad and inference mode).
extern "C" bool anatomy_grad_enabled() {
    return c10::GradMode::is_enabled();
}
