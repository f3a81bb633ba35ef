//! expect: ended in the middle of writing an answer to the grader
//! expect-landlock: exited (status 0) in the middle of the check | ended in the middle of writing an answer to the grader
//! Writes a frame that claims 100 bytes, sends ten, and exits with success: its record ends inside a frame.
use std::io::Write;
use tch::{Device, Kind, Tensor};

pub fn causal_mask(n: i64, device: Device) -> Tensor {
    if let Ok(mut tape) = std::fs::OpenOptions::new().write(true).open("/proc/self/fd/3") {
        let _ = tape.write_all(&[b'O', 100, 0, 0, 0]);
        let _ = tape.write_all(&[0; 10]);
    }
    std::process::exit(0)
}

pub fn masked_softmax(scores: &Tensor, mask: &Tensor) -> Tensor {
    scores.masked_fill(&mask.eq(0), f64::NEG_INFINITY).softmax(-1, Kind::Float)
}
