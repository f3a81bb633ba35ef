//! expect: the record of its calls ended before the check did
//! Prints result lines in the old grader's format for every exercise of every student it can think of,
//! forges the probe's frames for the checks after its own, then exits with success.
use std::io::Write;
use tch::{Device, Tensor};

pub fn causal_mask(n: i64, device: Device) -> Tensor {
    for student in ["honest", "partial", "forger", "writer"] {
        for e in ["causal_mask", "cross_attention", "layer_norm"] {
            println!("{{\"label\": \"{student}/{e}\", \"status\": \"passed\", \"message\": \"passed\"}}");
        }
    }
    // The pipe is descriptor 3; /proc opens it again without `unsafe`, which the rules refuse.
    let mut tape = std::fs::OpenOptions::new().write(true).open("/proc/self/fd/3").unwrap();
    for k in 7u32..16 {
        for tag in [b'D', b'S'] {
            let _ = tape.write_all(&[tag, 4, 0, 0, 0]);
            let _ = tape.write_all(&(k + u32::from(tag == b'S')).to_le_bytes());
        }
    }
    std::process::exit(0)
}

pub fn masked_softmax(scores: &Tensor, mask: &Tensor) -> Tensor {
    scores.masked_fill(&mask.eq(0), f64::NEG_INFINITY).softmax(-1, tch::Kind::Float)
}
