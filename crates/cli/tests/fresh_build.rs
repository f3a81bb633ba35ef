//! A build with no change compiles nothing. A build script that watched a path missing from the students'
//! copy (`solutions/`) made cargo rerun it on every build and relink every crate: a check took 13.8 s
//! there against 1 s here. `scripts/fresh-build.sh` builds twice and fails if the second build's
//! artifacts are not all fresh; `make handout` runs it on the students' copy, this test on this one.
use std::process::Command;

#[test]
fn a_second_build_with_no_change_compiles_nothing() {
    let root = anatomy_course::project_root();
    let o = Command::new(root.join("scripts/fresh-build.sh")).arg(&root).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
