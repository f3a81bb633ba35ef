//! Writing an output file whole, and never through somebody else's link.
//!
//! Every report, export, feedback file and scaffolded file goes through [`write_whole`]: the text is written
//! to a new partial file beside the target, then renamed over it, so an interrupted run leaves the old file
//! or the new one, never half of one. The partial file is created new and exclusive (`O_CREAT|O_EXCL`,
//! which never follows a link), so a link planted at its name cannot redirect the write; and a target that
//! is there but is not a regular file (a link, a device such as `/dev/null`, a folder) is refused, so that
//! the rename can only ever replace a file of ours.
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{bail, Context, Result};

/// Writes `text` to `path` whole (a new partial file in the same folder, then a rename). Refuses a `path`
/// that exists and is not a regular file, in one line that names it.
pub fn write_whole(path: &Path, text: &str) -> Result<()> {
    let mut partial = Partial::create(path)?;
    partial.file().write_all(text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
    partial.finish()
}

/// An output being written: a new, exclusive file beside its target, renamed over the target by
/// [`Partial::finish`] and removed if dropped unfinished. For outputs written piece by piece (a zip).
pub struct Partial {
    file: Option<File>,
    partial: PathBuf,
    path: PathBuf,
}

impl Partial {
    /// Starts the output `path`; refuses a `path` that is there and is not a regular file.
    pub fn create(path: &Path) -> Result<Partial> {
        target_may_be_replaced(path)?;
        Partial::create_at(path, partial_name(path))
    }

    fn create_at(path: &Path, partial: PathBuf) -> Result<Partial> {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&partial)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(Partial { file: Some(file), partial, path: path.to_path_buf() })
    }

    /// The partial file, to write to.
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("a partial file until finished")
    }

    /// Writes the file out to the disk and renames it over the target; on failure the partial file is
    /// removed (by `Drop`) and the target is as it was.
    pub fn finish(mut self) -> Result<()> {
        let file = self.file.as_ref().expect("a partial file until finished");
        file.sync_data()
            .and_then(|()| std::fs::rename(&self.partial, &self.path))
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        self.file = None;
        Ok(())
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

/// Refuses, in one line naming it, a `path` that exists and is not a regular file: a link, a folder, a
/// device, a pipe. A rename over it would replace a file that is not an output of ours.
pub fn target_may_be_replaced(path: &Path) -> Result<()> {
    if let Ok(there) = std::fs::symlink_metadata(path) {
        let kind = if there.file_type().is_symlink() {
            "a symbolic link"
        } else if there.is_dir() {
            "a folder"
        } else if !there.is_file() {
            "not a regular file (a device, a pipe or a socket)"
        } else {
            ""
        };
        if !kind.is_empty() {
            bail!("{} is {kind}: name a new file or a regular file to replace", path.display());
        }
    }
    Ok(())
}

/// `.NAME.PID-N.partial` beside `path`: hidden, unique to this process and call, so that two outputs of one
/// run (or two runs) never share a partial file.
fn partial_name(path: &Path) -> PathBuf {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.{}-{n}.partial", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_dir::TestDir;

    fn scratch(name: &str) -> TestDir {
        TestDir::new(&format!("write-{name}"))
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_new_file_and_a_replaced_one_are_written_whole_and_leave_no_partial_file() {
        let dir = scratch("plain");
        let path = dir.join("grades.csv");
        write_whole(&path, "one").unwrap();
        write_whole(&path, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(names(&dir), ["grades.csv"]);
    }

    #[test]
    fn a_link_at_the_target_or_at_any_partial_name_never_redirects_the_write() {
        let dir = scratch("links");
        let victim = dir.join("victim.txt");
        std::fs::write(&victim, "the instructor's file").unwrap();
        // A link where the output goes: refused, and the file it points at is untouched.
        let out = dir.join("grades.csv");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        let refused = write_whole(&out, "grades").unwrap_err().to_string();
        assert_eq!(
            refused,
            format!("{} is a symbolic link: name a new file or a regular file to replace", out.display())
        );
        // A link planted at the partial name: the exclusive create refuses it, and the victim keeps its bytes.
        let other = dir.join("report.md");
        let planted = partial_name(&other);
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let refused = Partial::create_at(&other, planted.clone()).err().unwrap().to_string();
        assert_eq!(refused, format!("cannot write {}", other.display()));
        assert!(planted.is_symlink(), "the planted link is not ours to remove");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the instructor's file");
        assert!(!other.exists());
        // The next call takes another partial name and writes the report.
        write_whole(&other, "report").unwrap();
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "report");
    }

    #[test]
    fn an_output_dropped_unfinished_leaves_nothing_and_the_old_file_stays() {
        let dir = scratch("dropped");
        let path = dir.join("autograder.zip");
        std::fs::write(&path, "the last one").unwrap();
        let mut partial = Partial::create(&path).unwrap();
        partial.file().write_all(b"half of a zip").unwrap();
        drop(partial);
        assert_eq!(names(&dir), ["autograder.zip"]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "the last one");
    }

    #[test]
    fn a_rename_that_fails_leaves_no_partial_file() {
        let dir = scratch("rename");
        let path = dir.join("report");
        let mut partial = Partial::create(&path).unwrap();
        partial.file().write_all(b"the report").unwrap();
        // The target became a folder with a file in it after the output began: the rename cannot replace it.
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("kept"), "").unwrap();
        assert_eq!(partial.finish().unwrap_err().to_string(), format!("cannot write {}", path.display()));
        assert_eq!(names(&dir), ["report"]);
    }

    #[test]
    fn a_device_or_a_folder_is_refused_and_left_as_it_is() {
        let refused = write_whole(Path::new("/dev/null"), "x").unwrap_err().to_string();
        assert_eq!(
            refused,
            "/dev/null is not a regular file (a device, a pipe or a socket): name a new file or a regular file to replace"
        );
        let dir = scratch("folder");
        let refused = write_whole(&dir, "x").unwrap_err().to_string();
        assert!(refused.ends_with("is a folder: name a new file or a regular file to replace"), "{refused}");
        assert!(names(&dir).is_empty());
    }
}
