//! expect: aborted; it reported: memory allocation of 1024 bytes failed
//! mistake: crashed
//! Prints the words of two limits it never met (the C library's out-of-memory line, the kernel's full
//! disk), then aborts. The grader saw an abort, and that is what it says; the words are what the code
//! reported, and choose nothing.
use tch::Tensor;

pub fn label_smoothed_loss(logits: &Tensor, targets: &Tensor, smoothing: f64, pad: i64) -> Tensor {
    eprintln!("memory allocation of 1024 bytes failed");
    eprintln!("No space left on device");
    std::process::abort()
}
