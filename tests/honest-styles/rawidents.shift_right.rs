//! Raw identifiers for names that are keywords: `r#mod`, `r#type`, `r#match` are variables here, not a
//! module, a type or a match. The shift is built with `roll` and the first column written over.
use tch::Tensor;

pub fn shift_right(targets: &Tensor, bos: i64, pad: i64) -> Tensor {
    let r#mod = targets.roll([1], [1]); // [batch, t]: each row moved one step right, the last token first
    let r#type = r#mod.narrow(1, 0, 1).fill_(bos);
    let r#match = targets.eq(pad);
    drop(r#type);
    r#mod.masked_fill(&r#match, pad)
}
