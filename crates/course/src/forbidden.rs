//! The finished operations an exercise asks the student to write instead of call, as data: each
//! exercise names its families ([`crate::Exercise::forbids`]), the grader's rules refuse a file that calls
//! one (`anatomy_intake::rules`), and the homework notebook's check card says so.

/// A family of finished operations an exercise asks the student to write instead of call.
#[derive(Debug)]
pub struct Forbidden {
    /// What the family is, for the message ("libtorch's attention kernels").
    pub what: &'static str,
    /// Parts of names, matched against each identifier with its case and underscores ignored, so that
    /// `layer_norm`, `f_layer_norm`, `native_layer_norm` and `LayerNorm` are all one match.
    pub names: &'static [&'static str],
}

/// libtorch's attention: `scaled_dot_product_attention` and the kernels behind it, the fused multi-head
/// attention and the transformer layers.
pub const ATTENTION: Forbidden = Forbidden {
    what: "libtorch's finished attention",
    names: &[
        "scaleddotproductattention",
        "scaleddotproductefficient",
        "scaleddotproductflash",
        "scaleddotproductcudnn",
        "flashattention",
        "efficientattention",
        "cudnnattention",
        "multiheadattention",
        "scaleddotattention",
        "transformerencoderlayer",
        "fusedsdp",
        "internalmaskedsoftmax",
    ],
};

/// Every normalisation layer of libtorch (a group norm with one group is a layer norm, too).
pub const NORMS: Forbidden = Forbidden {
    what: "libtorch's finished normalisation",
    // A transformer layer's fused forward normalises too: with its other weights zero it is two layer norms.
    names: &["layernorm", "groupnorm", "instancenorm", "batchnorm", "rmsnorm", "transformerencoderlayer"],
};

/// libtorch's cross-entropy, which takes a label-smoothing argument of its own, and the negative
/// log-likelihood it is made of.
pub const CROSS_ENTROPY: Forbidden = Forbidden {
    what: "libtorch's finished cross-entropy",
    // nll_loss after log_softmax is the cross-entropy's own core, padding and mean included.
    names: &["crossentropyloss", "crossentropyforlogits", "binarycrossentropy", "nllloss"],
};
