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

/// The `anatomy` binary, kept from the gradebook of whoever runs the tests: its data folder
/// (`XDG_DATA_HOME`, where a gradebook is kept without `--course`) is a folder of this test process's that
/// holds none, and `ANATOMY_GRADEBOOK` is unset, so that no command's output depends on the machine.
pub fn command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_anatomy"));
    let data = std::env::temp_dir().join(format!("anatomy-{}-data", std::process::id()));
    command.env("XDG_DATA_HOME", data).env_remove("ANATOMY_GRADEBOOK");
    command
}

/// `anatomy ARGS` ([`command`]): exit code, stdout, stderr.
pub fn anatomy(args: &[&str]) -> (Option<i32>, String, String) {
    let o = command().args(args).output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}
