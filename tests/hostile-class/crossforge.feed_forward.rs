//! expect: output: expected shape [2, 5, 16], got [2, 6, 8]
//! expect-landlock: passed | output: expected shape [2, 5, 16], got [2, 6, 8]
//! Computes the feed-forward layer right, then writes whole frames to its process's channel (descriptor 3,
//! opened again through /proc): the old format's START, an answer shaped like layer_norm's and DONE for every
//! check after its own, then the same in the new format. The same student's layer_norm.rs is wrong; were
//! any of these frames read as another check's, that check would be judged on them. Each check's process
//! writes to a channel of its own, so they are this check's own record, and fail this cell alone.
use std::io::Write;
use tch::nn::{self, Module};
use tch::Tensor;

fn frame(tag: u8, payload: &[u8]) -> Vec<u8> {
    let mut bytes = vec![tag];
    bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// A safetensors record of one f32 tensor of zeros.
fn record(shape: &[usize]) -> Vec<u8> {
    let n: usize = shape.iter().product();
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let header = format!("{{\"0\":{{\"dtype\":\"F32\",\"shape\":[{}],\"data_offsets\":[0,{}]}}}}", dims.join(","), 4 * n);
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend(std::iter::repeat(0u8).take(4 * n));
    bytes
}

pub fn feed_forward(x: &Tensor, linear_1: &nn::Linear, linear_2: &nn::Linear) -> Tensor {
    let answer = linear_2.forward(&linear_1.forward(x).gelu("none"));
    if let Ok(mut tape) = std::fs::OpenOptions::new().write(true).open("/proc/self/fd/3") {
        for k in 0u32..18 {
            let _ = tape.write_all(&frame(b'S', &k.to_le_bytes()));
            let _ = tape.write_all(&frame(b'O', &record(&[2, 6, 8])));
            let _ = tape.write_all(&frame(b'D', &k.to_le_bytes()));
        }
    }
    answer
}
