//! LibTorch has one random generator per process, and every test of a test file runs in one process,
//! on as many threads as `cargo test` likes. A test that seeds the generator and then draws gets other
//! numbers if a test beside it draws in between — so in a file where any test seeds, every test holds
//! the generator's lock (`common::seed()` or `common::generator()`) from its first line. This test reads
//! the test files and names any test that does not.
use std::path::Path;

#[path = "common/test_dir.rs"]
mod test_dir;
use test_dir::TestDir;

/// `(file, test name)` of every test that runs without the lock in a file that seeds.
fn unlocked_tests(dir: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    for path in files.into_iter().filter(|p| p.extension().is_some_and(|e| e == "rs")) {
        let text = std::fs::read_to_string(&path).unwrap();
        // A file seeds when one of its statements calls common::seed() (this file only names it in text).
        if !text.lines().any(|l| l.trim_start().starts_with("let _") && l.contains("= common::seed();")) {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim();
            if trimmed != "#[test]" && trimmed != "#[rstest]" {
                continue;
            }
            // The signature may span lines (rstest cases); the body starts after the line ending in `{`.
            let Some(open) = (i + 1..lines.len()).find(|&j| lines[j].trim_end().ends_with('{')) else { continue };
            let name = lines[i + 1..=open].iter().find(|l| l.contains("fn ")).map_or("?", |l| l.trim());
            let body = &lines[open + 1..(open + 3).min(lines.len())];
            if !body.iter().any(|l| l.contains("common::seed()") || l.contains("common::generator()")) {
                found.push((path.file_name().unwrap().to_string_lossy().into_owned(), name.to_string()));
            }
        }
    }
    found
}

#[test]
fn every_test_in_a_seeding_file_holds_the_generator() {
    let unlocked = unlocked_tests(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"));
    assert!(unlocked.is_empty(), "tests without common::generator() in files that seed: {unlocked:#?}");
}

#[test]
fn a_test_without_the_lock_is_found() {
    // The check itself must be able to fail: a file that seeds, with one test that does not lock.
    let dir = TestDir::new("generator-lock");
    let file = "#[test]\nfn seeded() {\n    let _g = common::seed();\n}\n\n#[test]\nfn draws() {\n    let x = 1;\n}\n";
    std::fs::write(dir.join("sample.rs"), file).unwrap();
    let found = unlocked_tests(&dir);
    assert_eq!(found, [("sample.rs".to_string(), "fn draws() {".to_string())]);
}
