//! `anatomy exercises watch`, the rustlings loop: grades the current exercise (the first not passed, or the
//! one named), then waits for a save of its file ([`file_events`]: file events, and polling twice a second)
//! or a key ([`keys`]: at once on a terminal, a line at a time from a pipe, as the tests drive it). A grade
//! runs on a thread of its own (`WatchResult::grade`), so keys still work: a line counts its seconds, and `q` or
//! Ctrl-C stops it at once, its processes killed. The state between two inputs is `anatomy_grade::watch`'s.
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use anatomy_course::{Exercise, Status};
use anatomy_grade::grading;
use anatomy_grade::progress::{self, list_with, progress_bar};
use anatomy_grade::watch::{State, WatchResult};
use anyhow::Result;
use crossterm::terminal;

mod file_events;
mod keys;

/// What the loop waits for.
pub enum Input {
    Saved(PathBuf),
    Key(char),
    /// An exercise named by number or name: a line from a pipe, or digits then Enter on a terminal.
    Choose(String),
    /// A grade that ran on its own thread ended.
    Graded(WatchResult),
    Closed,
}

/// How often the line of a running grade counts on.
const TICK: Duration = Duration::from_millis(100);

const KEYS: &str = "keys: h hint · l list · r reset · a number then Enter goes to that exercise · q quit";

/// Prints in raw mode too (where "\n" alone does not return the cursor); on a terminal it also clears the
/// screen for each verdict and keeps a line that counts a running grade's seconds.
struct Screen {
    raw: bool,
    terminal: bool,
}

impl Screen {
    fn say(&self, text: &str) {
        let text = if self.raw { text.replace('\n', "\r\n") } else { text.to_string() };
        // Over the line of a running grade, never glued to it (it is written again at the next tick).
        let text = if self.terminal { format!("\r\x1b[2K{text}") } else { text };
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "{text}");
        let _ = out.flush();
    }

    /// A new screen for a verdict, on a terminal (as rustlings clears it); nothing through a pipe.
    fn clear(&self) {
        if self.terminal {
            self.say("\x1b[2J\x1b[3J\x1b[H");
        }
    }

    /// The line of a running grade, written over itself on a terminal.
    fn status(&self, text: &str) {
        if self.terminal {
            self.say(text);
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        if self.raw {
            let _ = terminal::disable_raw_mode();
        }
    }
}

/// The loop's own state besides the exercise's: the grade running now, whether a save came meanwhile,
/// and the digits typed so far.
struct Watch {
    screen: Screen,
    state: State,
    tx: Sender<Input>,
    running: Option<(&'static Exercise, Instant)>,
    typed: String,
}

pub fn run(poll_only: bool, start: Option<&'static Exercise>) -> Result<bool> {
    let Some(first) = start.or_else(progress::first_unfinished) else {
        println!(
            "every exercise has passed — well done. `cargo anatomy exercises list` shows them; `cargo anatomy exercises watch \
             NAME` works on one again."
        );
        return Ok(true);
    };
    let (tx, rx) = mpsc::channel();
    let watcher = if poll_only { None } else { file_events::watch_files(tx.clone()) };
    file_events::spawn_polling(tx.clone());
    let terminal = std::io::stdout().is_terminal();
    let raw = std::io::stdin().is_terminal() && terminal::enable_raw_mode().is_ok();
    keys::spawn_keys(tx.clone(), raw);
    let screen = Screen { raw, terminal };
    let how = if watcher.is_some() { "file events and polling" } else { "polling twice a second" };
    screen.say(&format!("cargo anatomy exercises watch ({how}) — save the file to re-grade\n{KEYS}\n"));
    let mut watch = Watch { screen, state: State::new(first), tx, running: None, typed: String::new() };
    watch.start_grade();
    loop {
        let input = match rx.recv_timeout(TICK) {
            Ok(input) => input,
            Err(RecvTimeoutError::Timeout) => {
                watch.tick();
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => Input::Closed,
        };
        if let Some(done) = watch.take(input)? {
            return Ok(done);
        }
    }
}

impl Watch {
    /// One input; `Some` when the loop ends.
    fn take(&mut self, input: Input) -> Result<Option<bool>> {
        match input {
            Input::Closed | Input::Key('q') => self.quit(),
            Input::Key('h') => self.screen.say(&self.state.next_hint()),
            Input::Key('l') => self.screen.say(&format!(
                "{}type an exercise's number, then Enter, to work on it\n",
                list_with(Some(self.state.current))
            )),
            // The grade under way reads and records this file: it is not put back beneath it.
            Input::Key('r') if self.running.is_some() => self.screen.say("a grade is running: r once it ends\n"),
            Input::Key('r') => self.screen.say(&self.state.reset()?),
            Input::Key(d) if d.is_ascii_digit() => {
                self.typed.push(d);
                self.screen.status(&format!("go to exercise: {} (Enter)", self.typed));
            }
            Input::Key('\n') if !self.typed.is_empty() => {
                let typed = std::mem::take(&mut self.typed);
                self.screen.say("\n");
                self.choose(&typed);
            }
            Input::Key(_) => {
                self.typed.clear();
                self.screen.say(&format!("{KEYS}\n"));
            }
            Input::Choose(text) => self.choose(&text),
            Input::Saved(path) if self.state.is_new_save(&path) && self.running.is_none() => {
                // Editors write in several steps: let the save settle.
                std::thread::sleep(Duration::from_millis(50));
                self.start_grade();
            }
            // A save during a grade is graded once that grade has ended ([`Watch::graded`]).
            Input::Saved(_) => {}
            Input::Graded(verdict) => return Ok(self.graded(verdict)),
        }
        Ok(None)
    }

    /// `q`, Ctrl-C or the end of input: a grade under way is stopped at once, its processes killed and its
    /// scratch folders removed.
    fn quit(&mut self) -> ! {
        let stopped = self.running.map(|(e, _)| format!("stopped grading {}; ", e.name)).unwrap_or_default();
        self.screen.status("");
        self.screen.say(&format!("{stopped}bye — `cargo anatomy exercises watch` picks up where you left\n"));
        if self.screen.raw {
            let _ = terminal::disable_raw_mode();
        }
        grading::stop_and_exit(0)
    }

    fn choose(&mut self, text: &str) {
        match progress::chosen(text) {
            Ok(e) => {
                self.state.choose(e);
                self.screen.say(&format!("exercise {} — {}: {}\n", e.number(), e.name, e.summary));
                if self.running.is_none() {
                    self.start_grade();
                }
            }
            Err(err) => self.screen.say(&format!("{err:#}\n")),
        }
    }

    /// Grades the current exercise on a thread of its own; its verdict comes back as an input.
    fn start_grade(&mut self) {
        let e = self.state.current;
        self.state.mark_graded();
        self.running = Some((e, Instant::now()));
        if !self.screen.terminal {
            self.screen.say(&format!("grading {} …\n", e.name));
        }
        let tx = self.tx.clone();
        std::thread::spawn(move || {
            // The loop may have ended meanwhile: then nobody waits for this verdict.
            let _ = tx.send(Input::Graded(WatchResult::grade(e)));
        });
        self.tick();
    }

    /// The running grade's line, on a terminal: its seconds so far (or the number being typed).
    fn tick(&self) {
        if !self.typed.is_empty() {
            self.screen.status(&format!("go to exercise: {} (Enter)", self.typed));
        } else if let Some((e, started)) = self.running {
            let seconds = started.elapsed().as_secs_f64();
            self.screen.status(&format!("grading {} … {seconds:.1} s (q stops it)", e.name));
        }
    }

    /// A grade ended: its verdict on a new screen, then the next grade if one is due (the exercise passed and
    /// the next one starts, or the file was saved again meanwhile, or another exercise was chosen). `Some`
    /// when every exercise has passed.
    fn graded(&mut self, verdict: WatchResult) -> Option<bool> {
        self.running = None;
        self.screen.status("");
        let current = verdict.exercise.name == self.state.current.name;
        if current {
            self.screen.clear();
        }
        self.screen.say(&verdict.text());
        let passed = current && verdict.status() == Some(Status::Passed);
        if passed {
            if !self.state.advance() {
                self.screen.say("every exercise has passed — well done.\n");
                return Some(true);
            }
            let next = self.state.current;
            self.screen.say(&format!("\nnext: exercise {} — {}\n", next.number(), next.name));
        }
        self.screen.say(&format!("{}\n{KEYS}\n", progress_bar(24)));
        let file = self.state.current.file();
        if passed || !current || self.state.is_new_save(&file) {
            self.start_grade();
        }
        None
    }
}
