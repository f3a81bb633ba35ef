//! The keys: single keys on a terminal (raw mode, so that they act at once), one line at a time from a
//! pipe (how the tests drive the watch mode). Ctrl-C and Esc mean q; digits and Enter choose an exercise by
//! its number; a line from a pipe that is more than one letter (`7`, `cross_attention`) chooses the
//! exercise it names. End of input closes the loop.
use std::io::BufRead;
use std::sync::mpsc::Sender;

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::Input;

/// The letter a terminal key stands for, if any (Enter is `'\n'`).
fn letter(k: &KeyEvent) -> Option<char> {
    if k.kind != KeyEventKind::Press {
        return None;
    }
    match k.code {
        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Some('q'),
        KeyCode::Char(c) => Some(c.to_ascii_lowercase()),
        KeyCode::Esc => Some('q'),
        KeyCode::Enter => Some('\n'),
        _ => None,
    }
}

/// What a line from a pipe means: one letter is a key, anything longer names an exercise.
fn line_input(line: &str) -> Option<Input> {
    let line = line.trim();
    let mut chars = line.chars();
    match (chars.next(), chars.next()) {
        (None, _) => None,
        (Some(c), None) if !c.is_ascii_digit() => Some(Input::Key(c.to_ascii_lowercase())),
        _ => Some(Input::Choose(line.to_string())),
    }
}

/// Reads keys on a thread of its own until the input ends or the loop has gone.
pub fn spawn_keys(tx: Sender<Input>, raw: bool) {
    std::thread::spawn(move || {
        if raw {
            while let Ok(e) = event::read() {
                if let Some(key) = if let Event::Key(k) = e { letter(&k) } else { None } {
                    if tx.send(Input::Key(key)).is_err() {
                        return;
                    }
                }
            }
        } else {
            for line in std::io::stdin().lock().lines().map_while(|l| l.ok()) {
                if let Some(input) = line_input(&line) {
                    if tx.send(input).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = tx.send(Input::Closed);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_letters_and_ctrl_c_or_esc_quits() {
        let key = |code, modifiers| KeyEvent::new(code, modifiers);
        assert_eq!(letter(&key(KeyCode::Char('H'), KeyModifiers::SHIFT)), Some('h'));
        assert_eq!(letter(&key(KeyCode::Char('c'), KeyModifiers::CONTROL)), Some('q'));
        assert_eq!(letter(&key(KeyCode::Char('c'), KeyModifiers::NONE)), Some('c'));
        assert_eq!(letter(&key(KeyCode::Esc, KeyModifiers::NONE)), Some('q'));
        assert_eq!(letter(&key(KeyCode::Enter, KeyModifiers::NONE)), Some('\n'));
        assert_eq!(letter(&key(KeyCode::Tab, KeyModifiers::NONE)), None);
        let released = KeyEvent { kind: KeyEventKind::Release, ..key(KeyCode::Char('q'), KeyModifiers::NONE) };
        assert_eq!(letter(&released), None);
    }

    #[test]
    fn a_line_is_a_key_or_names_an_exercise() {
        assert!(matches!(line_input(" H "), Some(Input::Key('h'))));
        assert!(matches!(line_input("7"), Some(Input::Choose(n)) if n == "7"));
        assert!(matches!(line_input("cross_attention"), Some(Input::Choose(n)) if n == "cross_attention"));
        assert!(line_input("   ").is_none());
    }
}
