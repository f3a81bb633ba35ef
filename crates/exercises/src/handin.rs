//! What a student handed in: regular files, read once, with no link followed.
//!
//! A class folder is the instructor's, but what is inside a student's folder came from the student (an
//! archive from a learning platform or a git repository can carry symbolic links, FIFOs and device
//! names). A link to a classmate's file would be graded as this student's work, and a link to any file
//! the instructor can read would be compiled — its text coming back in the compiler's message — before
//! any sandbox starts. So each file is opened with `O_NOFOLLOW` (and `O_NONBLOCK`, so that a FIFO cannot
//! stall the grader), must be a regular file of at most [`MAX_FILE`] bytes, and is read once: only those
//! bytes are graded, compiled and compared. A student folder that is itself a link is the instructor's
//! doing and is followed.
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The largest exercise file read: a solution is a few kilobytes.
pub const MAX_FILE: u64 = 1 << 20;

/// The entry a student handed in for an exercise: `STUDENT/exercises/NAME.rs`, else `STUDENT/NAME.rs`,
/// whatever kind of entry it is (a link is found here and refused by [`read`]). When `STUDENT/exercises`
/// is itself a link, that link is the hand-in: nothing is read through it.
pub fn find(student: &Path, name: &str) -> Option<PathBuf> {
    let folder = student.join("exercises");
    let file = format!("{name}.rs");
    let candidates = match std::fs::symlink_metadata(&folder) {
        Ok(m) if m.file_type().is_symlink() => vec![folder, student.join(&file)],
        _ => vec![folder.join(&file), student.join(&file)],
    };
    candidates.into_iter().find(|p| std::fs::symlink_metadata(p).is_ok())
}

/// The bytes of a handed-in file, or the one-line reason it is refused (a link, not a regular file, too
/// large, unreadable).
pub fn read(path: &Path) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let opened = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path);
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(format!("{shown} is a symbolic link: hand in the file itself (a link is not graded)"));
        }
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let metadata = file.metadata().map_err(|e| format!("cannot read {shown}: {e}"))?;
    let kind = metadata.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a folder"
        } else if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(format!("{shown} is {what}: hand in the exercise as a regular file"));
    }
    if metadata.len() > MAX_FILE {
        return Err(format!("{shown} is larger than {} KiB: an exercise file is a few kilobytes", MAX_FILE >> 10));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(MAX_FILE + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!("{shown} is larger than {} KiB: an exercise file is a few kilobytes", MAX_FILE >> 10));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_fifos_folders_and_large_files_are_refused_and_regular_files_read() {
        let dir = std::env::temp_dir().join(format!("handin-{}", std::process::id()));
        let student = dir.join("ada");
        std::fs::create_dir_all(student.join("exercises")).unwrap();
        std::fs::write(dir.join("secret.txt"), "SECRET").unwrap();
        std::fs::write(student.join("exercises/layer_norm.rs"), "pub fn layer_norm() {}").unwrap();
        std::os::unix::fs::symlink(dir.join("secret.txt"), student.join("exercises/causal_mask.rs")).unwrap();
        std::fs::create_dir(student.join("exercises/split_heads.rs")).unwrap();
        let fifo = std::ffi::CString::new(student.join("exercises/embeddings.rs").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::fs::write(student.join("exercises/gpt_block.rs"), vec![b' '; MAX_FILE as usize + 1]).unwrap();

        let got = |name: &str| read(&find(&student, name).unwrap());
        assert_eq!(got("layer_norm").unwrap(), b"pub fn layer_norm() {}");
        assert!(got("causal_mask").unwrap_err().contains("is a symbolic link"));
        assert!(got("split_heads").unwrap_err().contains("is a folder"));
        assert!(got("embeddings").unwrap_err().contains("is a FIFO"));
        assert!(got("gpt_block").unwrap_err().contains("larger than 1024 KiB"));
        assert_eq!(find(&student, "beam_step"), None);

        // An exercises/ folder that is a link: the link is the hand-in, and nothing is read through it.
        let bob = dir.join("bob");
        std::fs::create_dir(&bob).unwrap();
        std::os::unix::fs::symlink(student.join("exercises"), bob.join("exercises")).unwrap();
        assert_eq!(find(&bob, "layer_norm"), Some(bob.join("exercises")));
        assert!(read(&bob.join("exercises")).unwrap_err().contains("is a symbolic link"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
