//! expect: writes `#` without its attribute's brackets
//! The right answer, plus a function exported as the C library's `free` by an attribute a macro assembles:
//! `#` in the macro's body, `[inline]` in its input (a reviewer's bypass; `[no_mangle]` is refused by name
//! anywhere, but the shape is refused whatever the brackets hold).
use tch::Tensor;

macro_rules! exported {
    ($attribute:tt) => {
        # $attribute
        pub fn release(_pointer: usize) {}
    };
}
exported!([inline]);

pub fn shift_right(targets: &Tensor, bos: i64, pad: i64) -> Tensor {
    let t = targets.size()[1];
    let start = targets.narrow(1, 0, 1).full_like(bos); // [batch, 1]
    let shifted = Tensor::cat(&[&start, &targets.narrow(1, 0, t - 1)], 1); // [batch, t]
    shifted.masked_fill(&targets.eq(pad), pad)
}
