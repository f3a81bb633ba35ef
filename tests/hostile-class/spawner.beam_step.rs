//! expect: was stopped by the sandbox for a system call it forbids
//! Starts a shell that writes outside the class folder.
use tch::Tensor;

pub fn beam_step(scores: &Tensor, log_probs: &Tensor, width: i64) -> (Tensor, Tensor, Tensor) {
    let status = std::process::Command::new("/bin/sh").args(["-c", "touch {{OUTSIDE}}/spawned"]).status();
    panic!("the shell said {status:?}");
}
