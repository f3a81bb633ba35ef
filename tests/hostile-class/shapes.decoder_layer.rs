//! expect: decoder_layer output: expected shape [2, 6,
//! Answers the first call right, then the later ones (the same decoder states with later targets changed,
//! another memory) with only the first three positions: the check compares those three, so values alone
//! would pass; every call's shape is compared first.
use std::sync::atomic::{AtomicUsize, Ordering};

use tch::nn::Module;
use tch::Tensor;

use transformer_anatomy::{Attention, Pass};

pub use transformer_anatomy::exercises::support::DecoderLayerParts;

static CALLS: AtomicUsize = AtomicUsize::new(0);

pub fn decoder_layer(
    x: &Tensor,
    memory: &Tensor,
    parts: &DecoderLayerParts,
    target_mask: &Tensor,
    source_mask: Option<&Tensor>,
) -> Tensor {
    let h = parts.norm_1.forward(x);
    let x = x + parts.self_attention.forward(&h, &h, Some(target_mask), Pass::EVAL).output;
    let x = &x + parts.cross_attention.forward(&parts.norm_2.forward(&x), memory, source_mask, Pass::EVAL).output;
    let out = &x + parts.feed_forward.forward(&parts.norm_3.forward(&x));
    if CALLS.fetch_add(1, Ordering::SeqCst) == 0 {
        out
    } else {
        out.narrow(1, 0, 3)
    }
}
