// `crate::Alpha` is `a`'s, re-exported at the root: an import of `a`.
pub struct Beam(pub crate::Alpha);
