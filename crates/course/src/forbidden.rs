//! The finished operations an exercise asks the student to write instead of call, as data: each
//! exercise names its families ([`crate::Exercise::forbids`]), the grader's rules refuse a file that calls
//! one (`anatomy_intake::rules`), and the homework notebook's check card says so.
//!
//! A family is refused by what a name *does*, not by the words it holds: only a name through which `tch`
//! or the learner's crate reach one of its operations ([`REACHING`], read off those crates' sources) is
//! refused; a helper the student names `layer_norm_moments` reaches nothing of LibTorch's and is theirs.
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// Every name `tch` and the learner's crate declare (a function, method, type, field, module, constant)
/// that holds one of the families' parts: the names through which a student's file can reach a finished
/// operation. Written from those crates' sources by `crates/intake/tests/forbidden_names.rs`
/// (`UPDATE_FORBIDDEN_NAMES=1` writes it again), which fails when the list and the sources disagree.
pub const REACHING: &str = include_str!("forbidden-names.txt");

static REACHING_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| REACHING.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect());

/// A name as the families' parts are matched against it: no `r#`, no underscores, lower case.
pub fn folded(name: &str) -> String {
    name.trim_start_matches("r#").chars().filter(|&c| c != '_').flat_map(char::to_lowercase).collect()
}

/// A family of finished operations an exercise asks the student to write instead of call.
#[derive(Debug)]
pub struct Forbidden {
    /// Its name in the declaration (`forbids = ["norms"]` in `crates/course/exercises.toml`): the
    /// constant's, in lower case.
    pub name: &'static str,
    /// What the family is, for the message ("libtorch's attention kernels").
    pub what: &'static str,
    /// Parts of names, matched against each identifier with its case and underscores ignored, so that
    /// `layer_norm`, `f_layer_norm`, `native_layer_norm` and `LayerNorm` are all one match.
    pub names: &'static [&'static str],
}

/// libtorch's attention: `scaled_dot_product_attention` and the kernels behind it, the fused multi-head
/// attention and the transformer layers.
pub const ATTENTION: Forbidden = Forbidden {
    name: "attention",
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
    name: "norms",
    what: "libtorch's finished normalisation",
    // A transformer layer's fused forward normalises too: with its other weights zero it is two layer norms.
    names: &["layernorm", "groupnorm", "instancenorm", "batchnorm", "rmsnorm", "transformerencoderlayer"],
};

/// libtorch's cross-entropy, which takes a label-smoothing argument of its own, and the negative
/// log-likelihood it is made of.
pub const CROSS_ENTROPY: Forbidden = Forbidden {
    name: "cross_entropy",
    what: "libtorch's finished cross-entropy",
    // nll_loss after log_softmax is the cross-entropy's own core, padding and mean included.
    names: &["crossentropyloss", "crossentropyforlogits", "binarycrossentropy", "nllloss"],
};

impl Forbidden {
    /// Whether `name` holds one of this family's parts.
    pub fn matches(&self, name: &str) -> bool {
        let key = folded(name);
        self.names.iter().any(|n| key.contains(n))
    }

    /// Whether `name` is one through which `tch` or the learner's crate reach this family (see [`REACHING`]).
    pub fn reaches(&self, name: &str) -> bool {
        self.matches(name) && REACHING_SET.contains(name.trim_start_matches("r#"))
    }
}

/// The families every exercise's rules know, in one list.
pub const FAMILIES: [&Forbidden; 3] = [&ATTENTION, &NORMS, &CROSS_ENTROPY];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_folded_without_raw_prefix_underscores_or_case() {
        assert_eq!(folded("r#Layer_Norm"), "layernorm");
        assert_eq!(folded("__NLL_loss__"), "nllloss");
        assert_eq!(folded("ÉCOLE_x"), "écolex", "lower case beyond ASCII");
        assert_eq!(folded("r#r#a"), "a", "every leading r# goes");
        assert_eq!(folded("a_r#b"), "ar#b", "only a leading r#");
    }

    #[test]
    fn a_family_matches_a_part_anywhere_in_a_name_and_nothing_else() {
        for name in ["layer_norm", "f_layer_norm", "native_layer_norm", "LayerNorm", "r#group_norm", "RMSNorm"] {
            assert!(NORMS.matches(name), "{name}");
        }
        for name in ["layer_mean", "norm", "layer", "l_norm", "normalize"] {
            assert!(!NORMS.matches(name), "{name}");
        }
        assert!(ATTENTION.matches("scaled_dot_product_attention") && ATTENTION.matches("_flash_attention_forward"));
        assert!(!ATTENTION.matches("scaled_dot_product"), "the exercise's own name is the student's");
        assert!(CROSS_ENTROPY.matches("nll_loss2d") && CROSS_ENTROPY.matches("CrossEntropyLoss"));
        assert!(!CROSS_ENTROPY.matches("label_smoothed_loss"));
        // The transformer layer normalises and attends: it is in both families.
        let both: Vec<&str> =
            FAMILIES.iter().filter(|f| f.matches("TransformerEncoderLayer")).map(|f| f.what).collect();
        assert_eq!(both, [ATTENTION.what, NORMS.what]);
    }

    #[test]
    fn only_a_name_tch_or_the_learners_crate_declares_reaches_a_family() {
        assert!(NORMS.reaches("layer_norm") && NORMS.reaches("r#layer_norm") && NORMS.reaches("LayerNorm"));
        assert!(CROSS_ENTROPY.reaches("nll_loss") && ATTENTION.reaches("scaled_dot_product_attention"));
        // A helper of the student's own matches a part but reaches nothing of LibTorch's.
        assert!(NORMS.matches("layer_norm_moments") && !NORMS.reaches("layer_norm_moments"));
        // A declared name reaches only the families it matches, and the list is matched as written.
        assert!(!ATTENTION.reaches("layer_norm") && !NORMS.reaches("Layer_Norm"));
        assert!(REACHING_SET.iter().all(|n| !n.starts_with('#') && !n.is_empty() && n.trim() == *n));
        assert!(REACHING_SET.iter().all(|n| FAMILIES.iter().any(|f| f.matches(n))), "every listed name holds a part");
    }
}
