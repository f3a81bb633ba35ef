//! What the instructors keep back from the students' copy (`exercises/kept-back`), for the tests that check
//! paths named in the docs: in the students' copy, those may be missing. The list is read by the course's
//! one reader (`crates/course/src/kept_back.rs`), included here as source: this package's tests do not
//! depend on the exercises' crates.
use std::path::Path;

#[path = "../../crates/course/src/kept_back.rs"]
#[allow(dead_code)]
mod reader;

/// The kept-back paths, and whether this checkout is the students' copy (it has no `solutions/`).
pub fn kept_back(root: &Path) -> (Vec<String>, bool) {
    (reader::KeptBack::read(root).unwrap().paths().to_vec(), !root.join("solutions").is_dir())
}
