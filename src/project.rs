//! Where the project's own folders are (`models/`, `.deps/`, `exercises/`, `chapters/`), found when the
//! program runs rather than fixed when it was built, so that a checkout that was moved or renamed after its
//! first build still finds its own files. The exercises' crate includes this same file.
use std::path::{Path, PathBuf};

/// The project's root: the folder that holds `Cargo.toml` and `grader/Cargo.toml`. Looked for at and
/// above the folder the program runs in (`cargo run` in a checkout, a notebook's kernel in `notebooks/`),
/// then above the program itself (a build's `target/debug/…` lies in the checkout it was built from, when
/// it is run from elsewhere), and only then where it was built.
pub fn project_root() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let here = std::env::current_dir().ok();
        let exe = std::env::current_exe().ok().and_then(|e| e.canonicalize().ok());
        root_above(here.as_deref())
            .or_else(|| root_above(exe.as_deref()))
            .unwrap_or_else(|| PathBuf::from(env!("ANATOMY_PROJECT_ROOT")))
    })
    .clone()
}

/// The checkout this program was built in, if it lies in one (a build's `target/…`); `None` for a program
/// installed elsewhere. The class grader refuses to run where [`project_root`] is another checkout.
pub fn program_root() -> Option<PathBuf> {
    root_above(std::env::current_exe().ok().and_then(|e| e.canonicalize().ok()).as_deref())
}

/// The nearest folder at or above `start` that is the project's root.
pub fn root_above(start: Option<&Path>) -> Option<PathBuf> {
    start?
        .ancestors()
        .find(|d| d.join("grader").join("Cargo.toml").is_file() && d.join("Cargo.toml").is_file())
        .map(Path::to_path_buf)
}
