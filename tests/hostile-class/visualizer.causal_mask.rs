//! expect: uses `#[debugger_visualizer]`, which makes the compiler read another file
//! The same read behind `cfg_attr`, of a classmate's file, as a GDB script (which rustc embeds in the
//! program's `.debug_gdb_scripts` section): every attribute a `cfg_attr` applies is read against the list
//! of those an exercise file may use, however deeply it is nested.
#![cfg_attr(all(), allow(unused), cfg_attr(not(test), debugger_visualizer(gdb_script_file = "{{CLASSMATE}}")))]
use tch::{Device, Kind, Tensor};

pub fn causal_mask(n: i64, device: Device) -> Tensor {
    Tensor::ones([n, n], (Kind::Float, device)).tril(0)
}

pub fn masked_softmax(scores: &Tensor, mask: &Tensor) -> Tensor {
    // -inf (not 0, not a large negative number) makes the softmax give exactly 0.
    scores.masked_fill(&mask.eq(0), f64::NEG_INFINITY).softmax(-1, scores.kind())
}
