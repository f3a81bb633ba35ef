//! The keys: single keys on a terminal (raw mode, so that they act at once), one letter per line from a
//! pipe (how the tests drive the watch mode). Ctrl-C and Esc mean q; end of input closes the loop.
use std::io::BufRead;
use std::sync::mpsc::Sender;

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::Input;

/// The letter a terminal key stands for, if any.
fn letter(k: &KeyEvent) -> Option<char> {
    if k.kind != KeyEventKind::Press {
        return None;
    }
    match k.code {
        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Some('q'),
        KeyCode::Char(c) => Some(c.to_ascii_lowercase()),
        KeyCode::Esc => Some('q'),
        _ => None,
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
        assert_eq!(letter(&key(KeyCode::Enter, KeyModifiers::NONE)), None);
        let released = KeyEvent { kind: KeyEventKind::Release, ..key(KeyCode::Char('q'), KeyModifiers::NONE) };
        assert_eq!(letter(&released), None);
    }
}
