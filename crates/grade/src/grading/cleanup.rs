//! Nothing left behind when the grader is stopped: a SIGTERM, SIGINT or SIGHUP in the middle of a class
//! kills the compilers and probes still running (their process groups) and removes every scratch folder,
//! then ends the grader with the usual status (128 + the signal). Without it, each stopped grading left its
//! students' copies and probes (tens of megabytes each) in `target/exercise-grader/`. The handout's
//! partial copy and its dependency links are [`Scratch`] folders too.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

static FOLDERS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// The process groups running now, and whether the process is stopping: a group started after the stop
/// began (a grading thread goes on to its next probe when the last one is killed) is killed as it is
/// registered, under the same lock, so none outlives the grader.
static GROUPS: Mutex<(BTreeSet<i32>, bool)> = Mutex::new((BTreeSet::new(), false));

/// A scratch folder removed when dropped, or when the process is stopped by a signal (the grader's
/// students' copies, the handout's partial copy).
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(folder: PathBuf) -> Scratch {
        install();
        FOLDERS.lock().unwrap_or_else(|e| e.into_inner()).push(folder.clone());
        Scratch(folder)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The folder is no longer scratch (it was renamed into place): neither the drop nor a signal removes
    /// anything at its path any more.
    pub fn keep(self) {
        FOLDERS.lock().unwrap_or_else(|e| e.into_inner()).retain(|f| f != &self.0);
        std::mem::forget(self);
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        FOLDERS.lock().unwrap_or_else(|e| e.into_inner()).retain(|f| f != &self.0);
    }
}

/// A child's process group (its pid: children are started with `process_group(0)`), killed if the
/// grader is stopped while it runs.
pub(super) struct Group(i32);

impl Group {
    pub(super) fn new(pid: u32) -> Group {
        let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
        if groups.1 {
            unsafe {
                libc::kill(-(pid as i32), libc::SIGKILL);
            }
        } else {
            groups.0.insert(pid as i32);
        }
        Group(pid as i32)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        GROUPS.lock().unwrap_or_else(|e| e.into_inner()).0.remove(&self.0);
    }
}

fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) else { return };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                stop_and_exit(128 + signal);
            }
        });
    });
}

/// Stops every grading under way at once and ends the process with `code`: the compilers and probes
/// still running are killed (their process groups) and every scratch folder is removed, as on a signal.
/// The watch mode's `q` during a grade ends this way.
pub fn stop_and_exit(code: i32) -> ! {
    {
        let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
        groups.1 = true;
        for &group in groups.0.iter() {
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        }
    }
    // Another thread may still be writing into a folder (the handout links files into its own):
    // removing again until it is gone, as a file added meanwhile fails the removal.
    for folder in FOLDERS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        for _ in 0..20 {
            if std::fs::remove_dir_all(folder).is_ok() || !folder.exists() {
                break;
            }
        }
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    // _exit, not exit: the grading threads are still running, and exit's handlers (LibTorch's static
    // destructors among them) then sometimes aborted the grader with SIGABRT.
    unsafe { libc::_exit(code) }
}
