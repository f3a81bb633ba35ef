//! ARCHITECTURE.md is the map a newcomer reads first: every path it names must exist. A name in backticks
//! that looks like a path (it has a `/` or a file extension) is looked up from the project's root, as a
//! reader would. In the students' copy, what instructors keep back (`exercises/kept-back`) may be missing.
use std::path::Path;

#[test]
fn every_path_architecture_md_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let kept_back: Vec<String> = std::fs::read_to_string(root.join("exercises/kept-back"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    let students_copy = !root.join("solutions").is_dir();
    let looks_like_a_path = |t: &str| {
        !t.contains(' ')
            && !t.contains('*')
            && (t.contains('/') || [".rs", ".md", ".py", ".sh", ".toml"].iter().any(|x| t.ends_with(x)))
    };
    let names: Vec<&str> = text.split('`').skip(1).step_by(2).filter(|t| looks_like_a_path(t)).collect();
    assert!(names.len() >= 40, "only {} paths found: {names:?}", names.len());
    let mut missing = Vec::new();
    for name in names {
        let found = ["", "src", "crates/exercises/src", "crates/cli/src"]
            .iter()
            .any(|base| root.join(base).join(name).exists());
        let may_be_missing = students_copy && kept_back.iter().any(|k| name.starts_with(k.as_str()));
        if !found && !may_be_missing {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md names paths that do not exist: {missing:?}");
}
