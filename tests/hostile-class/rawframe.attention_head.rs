//! expect: over the 8 MiB the grader reads of one answer
//! expect-landlock: passed | over the 8 MiB the grader reads of one answer
//! Writes the head of a frame that claims 2 GiB to its channel itself, then answers right: the grader
//! reads no more than one answer may take, and says which limit the code broke.
use std::io::Write;
use tch::nn::Module;
use tch::{Kind, Tensor};

pub use transformer_anatomy::exercises::support::Projections;

pub fn attention_head(hidden_state: &Tensor, projections: &Projections) -> Tensor {
    if let Ok(mut tape) = std::fs::OpenOptions::new().write(true).open("/proc/self/fd/3") {
        let _ = tape.write_all(&[b'O', 0xff, 0xff, 0xff, 0x7f]);
    }
    let (q, k, v) = (projections.query.forward(hidden_state), projections.key.forward(hidden_state), projections.value.forward(hidden_state));
    let scale = (*q.size().last().unwrap() as f64).sqrt();
    (q.bmm(&k.transpose(1, 2)) / scale).softmax(-1, Kind::Float).bmm(&v)
}
