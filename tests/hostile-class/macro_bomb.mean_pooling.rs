//! expect: compiling needed more than 2 GiB of memory
//! A macro that doubles its input on every expansion: the compiler's memory grows without end.
use tch::Tensor;

macro_rules! grow {
    (@ $($t:tt)*) => { grow!(@ $($t)* $($t)*); };
}

pub fn mean_pooling(hidden_states: &Tensor, attention_mask: &Tensor) -> Tensor {
    grow!(@ 1 2 3 4);
    hidden_states.mean_dim(1, false, tch::Kind::Float)
}
