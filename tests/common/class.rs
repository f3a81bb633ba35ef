//! What the command's class tests (crates/cli/tests: the hostile class, the autograders, the similarity
//! report) share: a student who hands in every reference solution, and the `anatomy` binary run with
//! its exit code, stdout and stderr. Only files that have `solutions/` include it; each uses a part.
#![allow(dead_code)]
use std::path::Path;
use std::process::Command;

use anatomy_course::EXERCISES;

/// Copies every reference solution into `folder` as `NAME.rs`.
pub fn hand_in_solutions(folder: &Path) {
    std::fs::create_dir_all(folder).unwrap();
    for e in EXERCISES {
        std::fs::copy(e.solution_file(), folder.join(format!("{}.rs", e.name))).unwrap();
    }
}

/// `anatomy ARGS`: exit code, stdout, stderr.
pub fn anatomy(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_anatomy")).args(args).output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}
