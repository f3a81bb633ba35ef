#!/* rustc: not a shebang (a `[` follows after a comment), so this line is `#![allow(unused)]` and the code after it; the grader blanks the whole line as a script's */[allow(unused)] use tch::Tensor; pub fn layer_norm(x: &Tensor, weight: &Tensor, bias: &Tensor, eps: f64) -> Tensor { let h = *x.size().last().unwrap(); x.layer_norm([h], Some(weight), Some(bias), eps, false) }
// expect: uses `layer_norm`, libtorch's finished normalisation
// A first line that starts `#!` but, past a comment, holds `[`: rustc reads it as an inner attribute and the
// code after it, not as a script's line to skip. The rules once blanked it and read none of it (a
// reviewer's bypass); now only a plain path to an interpreter is skipped, and this line is read.
