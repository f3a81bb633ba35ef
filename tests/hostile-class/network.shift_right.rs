//! expect: it reported: system call 41, to open a network connection
//! Sends what it was given to a port on this machine.
use std::io::Write;
use tch::Tensor;

pub fn shift_right(targets: &Tensor, bos: i64, pad: i64) -> Tensor {
    let mut stream = std::net::TcpStream::connect("127.0.0.1:{{PORT}}").unwrap();
    stream.write_all(format!("{targets:?}").as_bytes()).unwrap();
    targets.shallow_clone()
}
