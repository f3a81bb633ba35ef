//! A test's own folder in the system's temporary directory, removed when the test ends (passed or
//! failed), so that `cargo test` leaves nothing behind. Every test that needs such a folder includes this
//! file (`#[path]`): the learner's crate's tests, the command's, and the other crates' unit and
//! integration tests.
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The folder `anatomy-{process}-{n}-{name}`, new and empty (`n` counts the folders of this process, so
/// tests running side by side never share one); derefs to its `Path`.
pub struct TestDir(PathBuf);

impl TestDir {
    pub fn new(name: &str) -> Self {
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("anatomy-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TestDir(dir)
    }
}

impl std::ops::Deref for TestDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TestDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
