//! Which chapter is implemented by which files, and tested by which, is declared once: in each chapter's
//! own header, the one paragraph of `chapters/*.md` that starts `*Code:` (the format, and what is written
//! from it: `crates/notebooks/src/chapter_map.rs`, included here as source). README.md's chapter table,
//! docs/contributors.md's "The chapter, file by file" and src/lib.rs's module comments are written from the
//! headers by `cargo anatomy notebooks chapter-map --write`; these tests fail when one is not what the
//! headers make, or when a header names a file that does not exist.
#[path = "common/kept_back.rs"]
mod kept_back;
#[path = "../crates/notebooks/src/chapter_map.rs"]
mod chapter_map;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_path_a_chapter_header_names_exists() {
    let (kept_back, students_copy) = kept_back::kept_back(root());
    let headers = chapter_map::headers(root()).unwrap_or_else(|e| panic!("{e}"));
    assert!(headers.len() >= 14, "only {} chapters found", headers.len());
    let mut missing = Vec::new();
    for h in headers {
        for path in h.code.iter().chain(&h.tests) {
            let kept = students_copy && kept_back.iter().any(|k| path.starts_with(k.as_str()));
            if !root().join(path).exists() && !kept {
                missing.push(format!("{}: names {path}, which does not exist", h.path()));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_copies_of_the_chapter_map_are_as_the_headers_write_them() {
    let stale = chapter_map::stale(root()).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<String> =
        stale.iter().map(|(path, _)| path.strip_prefix(root()).unwrap().display().to_string()).collect();
    assert!(
        stale.is_empty(),
        "not what the chapters' headers make: {}: run `cargo anatomy notebooks chapter-map --write` (and change a \
         chapter's header, not its copies)",
        names.join(", ")
    );
}
