//! `anatomy exercises watch`: the rustlings loop. It grades the current exercise (the first that has not
//! passed), then waits: for a save of that file — told by the operating system's file events, and by
//! looking at the file's modification time twice a second where those events do not arrive (network and
//! container mounts) — or for a key. On a terminal the keys act at once (raw mode); from a pipe, one
//! letter per line works the same, which is how the tests drive it.
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant, SystemTime};

use anatomy_exercises::grading;
use anatomy_exercises::{progress, Exercise, Status, EXERCISES};
use anyhow::Result;
use crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::terminal;
use notify::{RecursiveMode, Watcher};

use anatomy_exercises::progress::{list_text, mark, relative};

enum Input {
    Saved(PathBuf),
    Key(char),
    Closed,
}

/// Prints in raw mode too (where "\n" alone does not return the cursor).
struct Screen {
    raw: bool,
}

impl Screen {
    fn say(&self, text: &str) {
        let text = if self.raw { text.replace('\n', "\r\n") } else { text.to_string() };
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "{text}");
        let _ = out.flush();
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        if self.raw {
            let _ = terminal::disable_raw_mode();
        }
    }
}

pub fn run(poll_only: bool) -> Result<bool> {
    let Some(mut current) = progress::first_unfinished() else {
        println!("every exercise has passed — well done. `anatomy exercises list` shows them.");
        return Ok(true);
    };
    let (tx, rx) = mpsc::channel();
    let watcher = if poll_only { None } else { watch_files(tx.clone()) };
    spawn_polling(tx.clone());
    let raw = std::io::stdin().is_terminal() && terminal::enable_raw_mode().is_ok();
    spawn_keys(tx, raw);
    let screen = Screen { raw };
    let how = if watcher.is_some() { "file events and polling" } else { "polling twice a second" };
    screen.say(&format!(
        "anatomy exercises watch ({how}) — save the file to re-grade; keys: h hint, l list, r reset, q quit\n"
    ));
    let mut hint_level = 0;
    // The modification time the current file had when it was last graded: a save seen twice (by the file
    // events and by polling) is graded once.
    let mut graded = progress::saved_at(current);
    grade_and_show(&screen, current);
    loop {
        match next_input(&rx) {
            Input::Closed | Input::Key('q') => {
                screen.say("bye — `anatomy exercises watch` picks up where you left\n");
                return Ok(true);
            }
            Input::Key('h') => {
                let levels = current.hint_levels();
                if hint_level < levels.len() {
                    screen.say(&format!("hint {}/{}: {}\n", hint_level + 1, levels.len(), levels[hint_level]));
                    hint_level += 1;
                } else {
                    screen.say(&format!("no more hints; all of them are in {}\n", relative(&current.hint_file())));
                }
            }
            Input::Key('l') => screen.say(&list_text()),
            Input::Key('r') => {
                progress::reset(current)?;
                graded = progress::saved_at(current);
                screen.say(&format!("{} is the untouched stub again\n", relative(&current.file())));
            }
            Input::Key(_) => screen.say("keys: h hint, l list, r reset, q quit\n"),
            Input::Saved(path) if path == current.file() && progress::saved_at(current) != graded => {
                // Editors write in several steps: let the save settle.
                std::thread::sleep(Duration::from_millis(50));
                graded = progress::saved_at(current);
                if grade_and_show(&screen, current) == Some(Status::Passed) {
                    match progress::first_unfinished() {
                        Some(next) => {
                            current = next;
                            hint_level = 0;
                            screen.say(&format!("\nnext: exercise {} — {}\n", current.number(), current.name));
                            graded = progress::saved_at(current);
                            grade_and_show(&screen, current);
                        }
                        None => {
                            screen.say("every exercise has passed — well done.\n");
                            return Ok(true);
                        }
                    }
                }
            }
            Input::Saved(_) => {}
        }
    }
}

/// Grades one exercise, records it and shows the verdict with the time it took.
fn grade_and_show(screen: &Screen, e: &'static Exercise) -> Option<Status> {
    let started = Instant::now();
    let outcome = match grading::grade(&progress::own_files(&[e])) {
        Ok(mut outcomes) => outcomes.remove(0),
        Err(err) => {
            screen.say(&format!("error: {err:#}\n"));
            return None;
        }
    };
    let repeats = match progress::record(std::slice::from_ref(&outcome)) {
        Ok(repeats) => repeats,
        Err(err) => {
            screen.say(&format!("(progress not saved: {err:#})\n"));
            Vec::new()
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    let words = outcome.status.words();
    screen.say(&format!(
        "\n{} exercise {} {} ({}): {words} [graded in {seconds:.1} s]\n{}\n",
        mark(Some(outcome.status)),
        e.number(),
        e.name,
        relative(&e.file()),
        outcome.message
    ));
    for r in &repeats {
        screen.say(&format!("{}\n", r.words()));
    }
    if outcome.status == Status::Passed && e.solution_file().exists() {
        screen.say(&format!("the reference solution: `anatomy exercises solution {}`\n", e.name));
    }
    Some(outcome.status)
}

fn next_input(rx: &Receiver<Input>) -> Input {
    rx.recv().unwrap_or(Input::Closed)
}

/// File events from the operating system. `None` where they are not available: polling still works.
fn watch_files(tx: Sender<Input>) -> Option<notify::RecommendedWatcher> {
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
    let folder = anatomy_exercises::exercises_dir();
    watcher.watch(&folder, RecursiveMode::NonRecursive).ok()?;
    Some(watcher)
}

/// The fallback: every exercise file's modification time, twice a second.
fn spawn_polling(tx: Sender<Input>) {
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

/// Single keys on a terminal; one letter per line from a pipe. End of input (or Ctrl-C) quits.
fn spawn_keys(tx: Sender<Input>, raw: bool) {
    std::thread::spawn(move || {
        if raw {
            while let Ok(e) = event::read() {
                if let TermEvent::Key(k) = e {
                    if k.kind != KeyEventKind::Press {
                        continue;
                    }
                    let key = match k.code {
                        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => 'q',
                        KeyCode::Char(c) => c.to_ascii_lowercase(),
                        KeyCode::Esc => 'q',
                        _ => continue,
                    };
                    if tx.send(Input::Key(key)).is_err() {
                        return;
                    }
                }
            }
        } else {
            for line in std::io::stdin().lock().lines().map_while(|l| l.ok()) {
                if let Some(c) = line.trim().chars().next() {
                    if tx.send(Input::Key(c.to_ascii_lowercase())).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = tx.send(Input::Closed);
    });
}
