//! expect: more than 4096 answers for one check
//! expect-landlock: passed | more than 4096 answers for one check
//! mistake: too_large
//! The same flood of empty answers from a second file of the same student (framestorm.attention_head.rs):
//! what the grader keeps is bounded per check, so two floods cost it no more than one.
use std::io::Write;
use tch::nn::{self, Module};
use tch::Tensor;

pub fn feed_forward(x: &Tensor, linear_1: &nn::Linear, linear_2: &nn::Linear) -> Tensor {
    if let Ok(mut tape) = std::fs::OpenOptions::new().write(true).open("/proc/self/fd/3") {
        let empty = [b'O', 0, 0, 0, 0].repeat(1 << 16);
        for _ in 0..51 {
            let _ = tape.write_all(&empty);
        }
    }
    linear_2.forward(&linear_1.forward(x).gelu("none"))
}
