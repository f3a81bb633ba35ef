//! expect: more than 16 MiB of answers | cannot read
//! expect-landlock: more than 16 MiB of answers | cannot read | not shifted
//! Seven 8 MiB answers on its own tape, each a tensor of four million zero-length axes: 2 bytes of JSON
//! an axis, 8 once read (a reviewer's finding: the grader held 235 MiB for the cell). A tensor of more than
//! 8 axes is not read, and a check's answers stop at 16 MiB.
use std::io::Write;
use tch::Tensor;

fn frame() -> Vec<u8> {
    let dims = 4_190_000;
    let mut header = String::with_capacity(2 * dims + 64);
    header.push_str("{\"0\":{\"dtype\":\"F32\",\"shape\":[");
    for i in 0..dims {
        header.push_str(if i == 0 { "0" } else { ",0" });
    }
    header.push_str("],\"data_offsets\":[0,0]}}");
    let mut payload = (header.len() as u64).to_le_bytes().to_vec();
    payload.extend_from_slice(header.as_bytes());
    let mut bytes = vec![b'O'];
    bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    bytes.extend(payload);
    bytes
}

pub fn shift_right(targets: &Tensor, bos: i64, pad: i64) -> Tensor {
    if let Ok(mut tape) = std::fs::OpenOptions::new().write(true).open("/proc/self/fd/3") {
        let f = frame();
        for _ in 0..7 {
            let _ = tape.write_all(&f);
        }
    }
    targets.shallow_clone()
}
