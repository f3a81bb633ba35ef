//! expect: the compiled program would be larger than 256 MiB
//! A static of 260 MiB: the compiler builds it, then writes it into the program, past the file-size limit.
use tch::Tensor;

static BIG: [u8; 260 << 20] = [7u8; 260 << 20];

pub fn shift_right(targets: &Tensor, bos: i64, pad: i64) -> Tensor {
    targets.full_like(BIG[12345] as i64)
}
