//! Saves of the exercise files, told two ways: the operating system's file events where they arrive, and
//! every file's modification time looked at twice a second where they do not (network and container
//! mounts). A save seen both ways is graded once (`anatomy_grade::watch::State` remembers what it graded).
use std::sync::mpsc::Sender;
use std::time::{Duration, SystemTime};

use anatomy_course::EXERCISES;
use anatomy_grade::progress;
use notify::{RecursiveMode, Watcher};

use super::Input;

/// File events from the operating system. `None` where they are not available: polling still works.
pub fn watch_files(tx: Sender<Input>) -> Option<notify::RecommendedWatcher> {
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event {
            if event.kind.is_modify() || event.kind.is_create() {
                for path in event.paths {
                    let _ = tx.send(Input::Saved(path));
                }
            }
        }
    })
    .ok()?;
    let folder = anatomy_course::exercises_dir();
    watcher.watch(&folder, RecursiveMode::NonRecursive).ok()?;
    Some(watcher)
}

/// The fallback: every exercise file's modification time, twice a second.
pub fn spawn_polling(tx: Sender<Input>) {
    std::thread::spawn(move || {
        let mut seen: Vec<Option<SystemTime>> = EXERCISES.iter().map(progress::saved_at).collect();
        loop {
            std::thread::sleep(Duration::from_millis(500));
            for (e, last) in EXERCISES.iter().zip(seen.iter_mut()) {
                let now = progress::saved_at(e);
                if now != *last {
                    *last = now;
                    if tx.send(Input::Saved(e.file())).is_err() {
                        return;
                    }
                }
            }
        }
    });
}
