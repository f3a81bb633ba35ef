//! expect: was stopped by the sandbox for a system call it forbids
//! mistake: forbidden_call
//! Writes DONE on its own tape, then makes a system call the sandbox forbids: the status its process ended
//! with is what happened, whatever its tape says (a reviewer's finding: DONE once hid the SIGSYS).
use std::io::Write;
use tch::Tensor;

pub fn shift_right(targets: &Tensor, bos: i64, pad: i64) -> Tensor {
    if let Ok(mut tape) = std::fs::OpenOptions::new().write(true).open("/proc/self/fd/3") {
        let _ = tape.write_all(&[b'D', 0, 0, 0, 0]);
    }
    let _ = std::net::UdpSocket::bind("127.0.0.1:0"); // socket(2): SIGSYS
    targets.shallow_clone()
}
