//! expect: more than 4096 answers for one check
//! expect-landlock: passed | more than 4096 answers for one check
//! mistake: too_large
//! Writes 3.3 million empty answers to its channel itself (16 MiB, within the bytes a check may send), then
//! answers right: each frame once became an entry the grader kept, and six such files took the grader's own
//! process past 2 GiB. The grader reads at most 4,096 frames of one check.
use std::io::Write;
use tch::nn::Module;
use tch::{Kind, Tensor};

pub use transformer_anatomy::exercises::support::Projections;

pub fn attention_head(hidden_state: &Tensor, projections: &Projections) -> Tensor {
    if let Ok(mut tape) = std::fs::OpenOptions::new().write(true).open("/proc/self/fd/3") {
        let empty = [b'O', 0, 0, 0, 0].repeat(1 << 16);
        for _ in 0..51 {
            let _ = tape.write_all(&empty);
        }
    }
    let (q, k, v) = (projections.query.forward(hidden_state), projections.key.forward(hidden_state), projections.value.forward(hidden_state));
    let scale = (*q.size().last().unwrap() as f64).sqrt();
    (q.bmm(&k.transpose(1, 2)) / scale).softmax(-1, Kind::Float).bmm(&v)
}
