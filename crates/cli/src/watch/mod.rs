//! `anatomy exercises watch`: the rustlings loop. It grades the current exercise (the first that has not
//! passed), then waits: for a save of that file ([`file_events`]: the operating system's file events, and
//! the file's modification time twice a second where those do not arrive) or for a key ([`keys`]: at once
//! on a terminal, one letter per line from a pipe, which is how the tests drive it). What it knows between
//! two inputs is `anatomy_grade::watch::State`; this file turns each input into a call on it and
//! prints the answer.
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anatomy_course::{Exercise, Status};
use anatomy_grade::grading;
use anatomy_grade::progress::{self, list_text, mark, relative};
use anatomy_grade::watch::State;
use anyhow::Result;
use crossterm::terminal;

mod file_events;
mod keys;

/// What the loop waits for.
pub enum Input {
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
    let Some(first) = progress::first_unfinished() else {
        println!("every exercise has passed — well done. `anatomy exercises list` shows them.");
        return Ok(true);
    };
    let (tx, rx) = mpsc::channel();
    let watcher = if poll_only { None } else { file_events::watch_files(tx.clone()) };
    file_events::spawn_polling(tx.clone());
    let raw = std::io::stdin().is_terminal() && terminal::enable_raw_mode().is_ok();
    keys::spawn_keys(tx, raw);
    let screen = Screen { raw };
    let how = if watcher.is_some() { "file events and polling" } else { "polling twice a second" };
    screen.say(&format!(
        "anatomy exercises watch ({how}) — save the file to re-grade; keys: h hint, l list, r reset, q quit\n"
    ));
    let mut state = State::new(first);
    grade_and_show(&screen, state.current);
    loop {
        match rx.recv().unwrap_or(Input::Closed) {
            Input::Closed | Input::Key('q') => {
                screen.say("bye — `anatomy exercises watch` picks up where you left\n");
                return Ok(true);
            }
            Input::Key('h') => screen.say(&state.next_hint()),
            Input::Key('l') => screen.say(&list_text()),
            Input::Key('r') => screen.say(&state.reset()?),
            Input::Key(_) => screen.say("keys: h hint, l list, r reset, q quit\n"),
            Input::Saved(path) if state.is_new_save(&path) => {
                // Editors write in several steps: let the save settle.
                std::thread::sleep(Duration::from_millis(50));
                state.mark_graded();
                if grade_and_show(&screen, state.current) == Some(Status::Passed) {
                    if !state.advance() {
                        screen.say("every exercise has passed — well done.\n");
                        return Ok(true);
                    }
                    screen.say(&format!("\nnext: exercise {} — {}\n", state.current.number(), state.current.name));
                    grade_and_show(&screen, state.current);
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
