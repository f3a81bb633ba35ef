//! What instructors keep back from the students' copy (`make handout`) and from the platforms' course
//! (the Gradescope zip, PrairieLearn's image): `exercises/kept-back`, one path a line (a folder ends with
//! `/`; `#` starts a comment). The one reader of that list: the handout and the platforms call it, and the
//! project's own tests include this file (`tests/common/kept_back.rs`), so it uses nothing but `std`.
use std::path::Path;

/// The list, where it lives in a checkout.
pub const FILE: &str = "exercises/kept-back";

/// The paths of `exercises/kept-back`, as written there (a folder with its `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptBack(Vec<String>);

impl KeptBack {
    /// The list's text read: blank lines and `#` comments left out.
    pub fn parse(text: &str) -> Self {
        let paths = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
        KeptBack(paths.map(str::to_string).collect())
    }

    /// The list of the checkout at `root`.
    pub fn read(root: &Path) -> std::io::Result<Self> {
        Ok(Self::parse(&std::fs::read_to_string(root.join(FILE))?))
    }

    /// The paths, as written in the list.
    pub fn paths(&self) -> &[String] {
        &self.0
    }

    /// Whether `name` (a path from the checkout's root, as git names it) is kept back: a listed file
    /// exactly, or anything under a listed folder.
    pub fn holds(&self, name: &str) -> bool {
        self.0.iter().any(|k| if k.ends_with('/') { name.starts_with(k.as_str()) } else { name == k })
    }
}
