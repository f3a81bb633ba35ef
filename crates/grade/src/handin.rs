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

use anatomy_intake::cells::solution_cells;
use anatomy_notebooks::{chapter_cells, chapter_notebooks, fence_errors, release_chapter, source_chapter, Cell};
use anyhow::{bail, Context, Result};

/// A class folder's students, by label ([`anatomy_intake::names::label`]), in order: one folder each (the folders are the instructor's, so a
/// folder that is a link is followed; what is inside is the student's, and read by [`read`]). An nbgrader
/// course folder (one with `nbgrader_config.py` and `submitted/`) stands for its `submitted/`.
pub fn students(submissions: &Path) -> Result<Vec<(String, PathBuf)>> {
    let nbgrader = submissions.join("submitted");
    let submissions = match submissions.join("nbgrader_config.py").is_file() && nbgrader.is_dir() {
        true => nbgrader.as_path(),
        false => submissions,
    };
    let mut students: Vec<PathBuf> = std::fs::read_dir(submissions)
        .with_context(|| format!("{} is not a folder of student folders", submissions.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    students.sort();
    if students.is_empty() {
        bail!("{} holds no student folders (one folder per student, with their exercise files)", submissions.display());
    }
    // Each folder's name as its label: lossless, so that two folders are never one student.
    Ok(students.into_iter().map(|s| (anatomy_intake::names::label(s.file_name().expect("a folder")), s)).collect())
}

/// The largest exercise file read: a solution is a few kilobytes.
pub const MAX_FILE: u64 = 1 << 20;

/// The entry a student handed in for an exercise: `STUDENT/exercises/NAME.rs`, else `STUDENT/NAME.rs`,
/// whatever kind of entry it is (a link is found here and refused by [`read`]); failing those, a notebook
/// whose solution cell `NAME` holds the code (see [`notebooks`]). When `STUDENT/exercises` is itself a
/// link, that link is the hand-in: nothing is read through it.
pub fn find(student: &Path, name: &str) -> Option<PathBuf> {
    let folder = student.join("exercises");
    let file = format!("{name}.rs");
    let candidates = match std::fs::symlink_metadata(&folder) {
        Ok(m) if m.file_type().is_symlink() => vec![folder, student.join(&file)],
        _ => vec![folder.join(&file), student.join(&file)],
    };
    candidates.into_iter().find(|p| std::fs::symlink_metadata(p).is_ok()).or_else(|| find_in_notebooks(student, name))
}

/// The notebook that holds exercise `name`'s solution cell (the first, in name order, if several do). A
/// notebook that cannot be read (a link, a FIFO, not JSON) is the hand-in of the chapter's homework, so
/// that its refusal is seen where the homework is graded.
fn find_in_notebooks(student: &Path, name: &str) -> Option<PathBuf> {
    notebook_with(notebooks(student), name)
}

/// Of these notebooks, the one whose solution cell `name` holds the code, as [`find_in_notebooks`] picks it.
fn notebook_with(notebooks: Vec<PathBuf>, name: &str) -> Option<PathBuf> {
    let homework = anatomy_course::EXERCISES.iter().any(|e| e.name == name && e.homework);
    let mut refused = None;
    for notebook in notebooks {
        match read_limited(&notebook, MAX_NOTEBOOK).and_then(|bytes| solution_cells(&bytes)) {
            Ok(cells) if cells.iter().any(|(id, _)| id == name) => return Some(notebook),
            Ok(_) => {}
            Err(_) => refused = refused.or(Some(notebook)),
        }
    }
    refused.filter(|_| homework)
}

/// What one student handed in: a folder of their own, or — from a learning platform's bulk download, where
/// every student's files lie side by side — their files, each by the name the student gave it.
#[derive(Debug, Clone, PartialEq)]
pub enum HandIn {
    Folder(PathBuf),
    Files(Vec<(String, PathBuf)>),
}

impl HandIn {
    /// The entry handed in for exercise `name`: in a folder as [`find`] finds it; among files, the one
    /// named `NAME.rs`, else a notebook whose solution cell `name` holds the code.
    pub fn find(&self, name: &str) -> Option<PathBuf> {
        match self {
            HandIn::Folder(folder) => find(folder, name),
            HandIn::Files(files) => {
                let file = format!("{name}.rs");
                let named = files.iter().find(|(n, _)| *n == file).map(|(_, p)| p.clone());
                let notebooks =
                    || files.iter().filter(|(n, _)| n.ends_with(".ipynb")).map(|(_, p)| p.clone()).collect();
                named.or_else(|| notebook_with(notebooks(), name))
            }
        }
    }

    /// When the student handed in, where a folder says ([`handed_in`]); a download's files say nothing.
    pub fn handed_in(&self) -> Option<time::OffsetDateTime> {
        match self {
            HandIn::Folder(folder) => handed_in(folder),
            HandIn::Files(_) => None,
        }
    }
}

/// The largest notebook read: the homework with the outputs of a run or two.
pub const MAX_NOTEBOOK: u64 = 16 << 20;

/// The notebooks (`*.ipynb` entries of any kind) a student folder holds: at its top, and one folder down
/// as nbgrader's `submitted/STUDENT/ASSIGNMENT/` has them. Hidden folders (`.ipynb_checkpoints/`, JupyterLab's
/// autosaves) are not looked into; linked folders are not entered.
pub fn notebooks(student: &Path) -> Vec<PathBuf> {
    let entries = |dir: &Path| -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> =
            std::fs::read_dir(dir).map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
        found.sort();
        found
    };
    let is_notebook = |p: &PathBuf| p.extension().is_some_and(|x| x == "ipynb");
    let mut found: Vec<PathBuf> = entries(student).into_iter().filter(is_notebook).collect();
    for dir in entries(student) {
        let hidden = dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
        let real_dir = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir());
        if real_dir && !hidden {
            found.extend(entries(&dir).into_iter().filter(is_notebook));
        }
    }
    found
}

/// A solution cell as an exercise file: the cell's lines first, so that a line of the file is the same
/// line of the cell, then the names the notebook's set-up cell gave it — `tch`'s items (as a glob, which
/// any name of the cell's own shadows), its `Module` traits, and the exercise's allowed imports (its
/// stub's `uses`) that the cell does not import itself.
pub fn cell_as_file(cell: &str, exercise: &anatomy_course::Exercise) -> String {
    let own = anatomy_intake::rules::imported_names(cell);
    let mut file = cell.trim_end().to_string();
    file += "\n\n// Below: what the notebook's set-up cell gives the solution cell (added by the grader).\n";
    file +=
        "#[allow(unused_imports)]\nuse tch::*;\n#[allow(unused_imports)]\nuse tch::nn::{Module as _, ModuleT as _};\n";
    for path in exercise.uses {
        let name = path.rsplit("::").next().expect("a path");
        if !own.iter().any(|n| n == name) {
            file += &format!("#[allow(unused_imports)]\npub use transformer_anatomy::{path};\n");
        }
    }
    file
}

/// What a submission's code is: a file's bytes ([`read`]), or, for a notebook, exercise `e`'s solution
/// cell made a file ([`cell_as_file`]); or the one-line reason it is refused.
pub fn read_code(path: &Path, e: &anatomy_course::Exercise) -> Result<Vec<u8>, String> {
    if path.extension().is_none_or(|x| x != "ipynb") {
        return read(path);
    }
    let shown = path.display();
    let bytes = read_limited(path, MAX_NOTEBOOK)?;
    let cells = solution_cells(&bytes).map_err(|why| format!("{shown} {why}"))?;
    match cells.iter().find(|(id, _)| id == e.name) {
        Some((_, cell)) if cell.len() as u64 <= MAX_FILE => Ok(cell_as_file(cell, e).into_bytes()),
        Some(_) => Err(format!("{shown}: the solution cell {} is larger than {} KiB", e.name, MAX_FILE >> 10)),
        None => Err(format!(
            "{shown} has no solution cell {}: hand in the notebook as released (its solution cell's nbgrader id is {})",
            e.name, e.name
        )),
    }
}

/// When the student handed in, where the folder says: nbgrader's `timestamp.txt`, at the top of the student's
/// folder or one folder down (`submitted/STUDENT/ASSIGNMENT/timestamp.txt`); the latest if several folders
/// have one. `None` when no such file can be read as a time (read as any hand-in is: no link followed).
pub fn handed_in(student: &Path) -> Option<time::OffsetDateTime> {
    let at = |dir: &Path| {
        let bytes = read_limited(&dir.join("timestamp.txt"), 256).ok()?;
        anatomy_intake::times::parse_time(std::str::from_utf8(&bytes).ok()?)
    };
    let mut folders = vec![student.to_path_buf()];
    if let Ok(entries) = std::fs::read_dir(student) {
        folders.extend(
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())),
        );
    }
    folders.iter().filter_map(|dir| at(dir)).max()
}

/// The bytes of a handed-in file, or the one-line reason it is refused (a link, not a regular file, too
/// large, unreadable).
pub fn read(path: &Path) -> Result<Vec<u8>, String> {
    read_limited(path, MAX_FILE)
}

/// [`read`], for files of at most `max` bytes.
fn read_limited(path: &Path, max: u64) -> Result<Vec<u8>, String> {
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
    let too_large = || format!("{shown} is larger than {} KiB: an exercise file is a few kilobytes", max >> 10);
    if metadata.len() > max {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The chapters with nbgrader solution cells, each with its text: the homework notebooks' sources.
pub fn homework_chapters(root: &Path) -> Result<Vec<(PathBuf, PathBuf, String)>> {
    let mut found = Vec::new();
    for (chapter, notebook) in chapter_notebooks(root)? {
        let markdown =
            std::fs::read_to_string(&chapter).with_context(|| format!("cannot read {}", chapter.display()))?;
        if let Some(e) = fence_errors(&markdown).first() {
            bail!("{}: {e}", chapter.display());
        }
        if chapter_cells(&markdown).iter().any(|c| matches!(c, Cell::Solution { .. })) {
            found.push((chapter, notebook, markdown));
        }
    }
    Ok(found)
}

/// Exercise `e`'s solution cells in this project's homework chapters, as the grader makes them files:
/// as released (`todo!()`) and as solved (the instructors' version, the reference solution put in from
/// `solutions/`; a students' copy has none). Base code for the similarity report.
pub fn solution_cell_files(e: &anatomy_course::Exercise) -> Vec<String> {
    let root = anatomy_course::project_root();
    let mut files = Vec::new();
    for (_, _, markdown) in homework_chapters(&root).unwrap_or_default() {
        let solved = source_chapter(&markdown, &root.join("solutions")).unwrap_or_else(|_| markdown.clone());
        let released = release_chapter(&markdown).unwrap_or_default();
        for text in [&solved, &released] {
            for cell in chapter_cells(text) {
                if let Cell::Solution { id, code } = cell {
                    if id == e.name {
                        files.push(cell_as_file(&code, e));
                    }
                }
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_fifos_folders_and_large_files_are_refused_and_regular_files_read() {
        let dir = crate::test_dir::TestDir::new("grade-handin");
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
    }

    /// The homework's solution cell as base code: as released, and, in an instructors' copy, as solved,
    /// with the reference solution that the chapter itself no longer shows.
    #[test]
    fn the_homeworks_base_code_is_its_cell_as_released_and_as_solved() {
        let e = anatomy_course::EXERCISES.iter().find(|e| e.name == "cross_attention").unwrap();
        let files = solution_cell_files(e);
        assert_eq!(files.len(), 2, "{files:?}");
        assert!(files[1].contains("    todo!()\n") && !files[1].contains("q.bmm("), "{}", files[1]);
        if anatomy_course::project_root().join("solutions").is_dir() {
            assert!(files[0].contains("BEGIN SOLUTION") && files[0].contains("q.bmm("), "{}", files[0]);
        }
    }
}
