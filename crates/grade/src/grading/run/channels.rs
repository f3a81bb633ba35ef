//! Reading a probe's channels, each on a thread of its own, into one stream of events: the parent's
//! control frames, and for the check running now its tape's frames and its output's size. Each reader
//! drains its pipe to the end, keeping only what the grader needs, so that no process is ever blocked on a
//! full pipe; frames are read by `anatomy_intake::tape` (bounded and fuzzed).
use std::fs::File;
use std::io::Read;
use std::sync::mpsc::Sender;

use anatomy_intake::tape::{Broken, Frame, Frames};

/// The first bytes of a check's output kept: for its first line (where Rust and the C library say why a
/// process aborts: "memory allocation of … failed", "thread … has overflowed its stack"), and for a learner
/// grading their own files, what their code printed (`anatomy_intake::printed` shows at most 40 lines).
const KEPT_OUTPUT: usize = 8 << 10;

pub(super) enum Event {
    /// A frame of the parent's control channel.
    Control(Frame),
    /// The control channel ended (the parent ended), or broke.
    ControlEnd,
    /// A frame of check `k`'s tape.
    Tape(usize, Frame),
    /// Check `k`'s tape ended: cleanly, or broken (the rest is drained unread).
    TapeEnd(usize, Option<Broken>),
    /// Check `k` printed this many bytes more, of which these are within the first bytes kept.
    Printed(usize, usize, Vec<u8>),
    /// Check `k`'s output ended.
    OutputEnd(usize),
}

/// Reads frames from `reader` until it ends (or sends more frames than the grader reads of one channel),
/// sending each with `wrap`, then `end` with why it ended.
fn frames(
    reader: File,
    events: Sender<Event>,
    wrap: impl Fn(Frame) -> Event + Send + 'static,
    end: impl FnOnce(Option<Broken>) -> Event + Send + 'static,
) {
    std::thread::spawn(move || {
        let mut frames = Frames::new(reader);
        let broken = loop {
            match frames.next_frame() {
                Ok(Some(frame)) => {
                    if events.send(wrap(frame)).is_err() {
                        break None;
                    }
                }
                Ok(None) => break None,
                Err(b) => break Some(b),
            }
        };
        let _ = events.send(end(broken));
        let _ = std::io::copy(&mut frames.into_inner(), &mut std::io::sink());
    });
}

/// The parent's control channel.
pub(super) fn control(reader: File, events: Sender<Event>) {
    frames(reader, events, Event::Control, |_| Event::ControlEnd);
}

/// Check `k`'s tape and output, read from when it starts.
pub(super) fn check(k: usize, tape: File, output: File, events: Sender<Event>) {
    frames(tape, events.clone(), move |f| Event::Tape(k, f), move |b| Event::TapeEnd(k, b));
    std::thread::spawn(move || {
        let mut reader = output;
        let mut kept = 0;
        let mut buffer = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buffer) {
            if n == 0 {
                break;
            }
            let room = KEPT_OUTPUT.saturating_sub(kept);
            let first = buffer[..n.min(room)].to_vec();
            kept += first.len();
            // Sent even when nobody listens any more, so that the pipe is drained to its end.
            let _ = events.send(Event::Printed(k, n, first));
        }
        let _ = events.send(Event::OutputEnd(k));
    });
}

/// What the parent itself prints (LibTorch's warnings, at most): read and thrown away, so that it never
/// blocks on a full pipe.
pub(super) fn drain(pipe: impl Read + Send + 'static) {
    std::thread::spawn(move || {
        let mut pipe = pipe;
        let _ = std::io::copy(&mut pipe, &mut std::io::sink());
    });
}
