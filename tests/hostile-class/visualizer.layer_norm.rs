//! expect: uses `#[debugger_visualizer]`, which makes the compiler read another file
//! Has the compiler read the secret file while compiling: `#![debugger_visualizer]` names a file for the
//! debugger, which rustc reads and embeds in the program, where the answer's own code could find it again.
//! Wherever the compiler could read the path, the file compiled and the cell passed; the rules now refuse
//! the attribute by its name before anything is compiled (it is not among those an exercise file may use).
#![debugger_visualizer(natvis_file = "{{SECRET}}")]
use tch::{Kind, Tensor};

pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor {
    let mean = x.mean_dim(-1, true, Kind::Float); // [batch, seq, 1]
    let centred = x - &mean;
    let variance = (&centred * &centred).mean_dim(-1, true, Kind::Float); // biased: divided by n
    centred / (variance + eps).sqrt() * weight + bias
}
