//! What the instructors keep back from the students' copy (`exercises/kept-back`, one path a line), for the
//! tests that check paths named in the docs: in the students' copy, those may be missing.
use std::path::Path;

/// The kept-back paths, and whether this checkout is the students' copy (it has no `solutions/`).
pub fn kept_back(root: &Path) -> (Vec<String>, bool) {
    let kept: Vec<String> = std::fs::read_to_string(root.join("exercises/kept-back"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    (kept, !root.join("solutions").is_dir())
}
