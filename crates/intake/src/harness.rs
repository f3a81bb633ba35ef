//! The fuzzing harness's entry points: each takes arbitrary bytes, passes them through one of the ways
//! student bytes come in, and panics if what comes out breaks a promise of this crate. libFuzzer drives
//! them in `fuzz/` (`make fuzz`); `tests/corpus.rs` runs every file of the committed corpus through them
//! in `cargo test`. A stack overflow aborts the process, which libFuzzer reports as a crash too.
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::bounds::{self, MAX_DEPTH, MAX_TOKENS};
use anatomy_course::forbidden::{ATTENTION, CROSS_ENTROPY, NORMS};
use anatomy_course::wire::{MAX_FRAME, MAX_FRAMES};

use crate::rules::{self, Verdict};
use crate::{cells, names, printed as prints, roster as rosters, similarity, tape, times};

/// An entry point: bytes in, a panic if a promise is broken.
pub type Target = fn(&[u8]);

/// The entry points, by the name of their fuzz target and corpus folder.
pub const TARGETS: &[(&str, Target)] = &[
    ("rules", rules),
    ("notebook", notebook),
    ("similarity", similarity),
    ("time", time),
    ("names", names),
    ("tape", tape),
    ("roster", roster),
    ("printed", printed),
];

/// A hand-in file through the stubs' rules (as an exercise that imports one item and forbids all three
/// families would read it) and the names it imports: a verdict, never a panic; a file is refused for the
/// bounds exactly when [`bounds::check_text`] finds it beyond them, with a reason that names the limit.
pub fn rules(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    let verdict = rules::check(text, &["exercises::support::Projections"], &[&ATTENTION, &NORMS, &CROSS_ENTROPY]);
    match (bounds::check_text(text), &verdict) {
        (Ok(Some(_)), Verdict::Beyond(r)) => {
            let limit = r.message.contains(&MAX_DEPTH.to_string()) || r.message.contains(&MAX_TOKENS.to_string());
            assert!(limit, "a refusal for the bounds that names neither: {r:?}");
        }
        (Ok(Some(b)), other) => panic!("beyond the bounds ({b:?}) but read: {other:?}"),
        // Within the bounds, the reader must finish: a panic of the parser comes back as Beyond.
        (Ok(None), Verdict::Beyond(r)) => panic!("within the bounds but not read: {r:?}"),
        _ => {}
    }
    rules::imported_names(text);
}

/// A notebook through the cell reader, then each solution cell through the rules: never more solution
/// cells than the reader's limit of cells.
pub fn notebook(bytes: &[u8]) {
    if let Ok(cells) = cells::solution_cells(bytes) {
        assert!(cells.len() <= cells::MAX_CELLS, "{} solution cells", cells.len());
        for (_, source) in cells {
            rules(source.as_bytes());
        }
    }
}

/// Two files (the bytes split at the first NUL, or in half) through the similarity tokenizer and
/// comparison: a file is compared with itself at score 1 when it has enough fingerprints.
pub fn similarity(bytes: &[u8]) {
    let cut = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len() / 2);
    let (a, b) =
        (String::from_utf8_lossy(&bytes[..cut]), String::from_utf8_lossy(&bytes[(cut + 1).min(bytes.len())..]));
    let entry = |student: &str, text: &str| similarity::StudentFile { student: student.into(), text: text.into() };
    let entries = [entry("a", &a), entry("b", &b), entry("a again", &a)];
    let pairs = similarity::compare("fuzzed", &entries, &[], 0.0);
    for p in &pairs {
        assert!((0.0..=1.0).contains(&p.score), "{p:?}");
    }
    // A file with enough fingerprints of its own is found equal to itself.
    let own = similarity::tokens(&a).map(|t| similarity::fingerprints(&t).len()).unwrap_or(0);
    let itself = pairs.iter().find(|p| p.students == ["a".to_string(), "a again".to_string()]);
    if own >= similarity::MIN_SHARED {
        assert_eq!(itself.map(|p| p.score), Some(1.0), "{a:?} against itself");
    }
}

/// A hand-in time: any time read back is written and read again to the same instant.
pub fn time(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    if let Some(t) = times::parse_time(text) {
        let written = t.format(&time::format_description::well_known::Rfc3339);
        if let Ok(written) = written {
            assert_eq!(times::parse_time(&written), Some(t), "{text:?} → {written}");
        }
    }
}

/// A class folder's names (the bytes split at `/`, which no name holds): each label gives its name's
/// bytes back, shows no control character, and two names share a label only if they are the same name;
/// two names that are one after Unicode normalisation show it, one of their labels holding an escape.
pub fn names(bytes: &[u8]) {
    use unicode_normalization::UnicodeNormalization;
    let mut seen: std::collections::BTreeMap<String, &[u8]> = std::collections::BTreeMap::new();
    let mut composed: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    for name in bytes.split(|&b| b == b'/').filter(|n| !n.is_empty()) {
        let label = names::label(OsStr::from_bytes(name));
        assert!(!label.chars().any(char::is_control), "{label:?}");
        assert_eq!(names::bytes_of(&label).as_deref(), Some(name), "{label:?}");
        if let Some(other) = seen.insert(label.clone(), name) {
            assert_eq!(other, name, "two names, one label {label:?}");
        }
        if let Ok(text) = std::str::from_utf8(name) {
            if let Some(other) = composed.insert(text.nfc().collect(), label.clone()) {
                if other != label {
                    assert!(other.contains("\\u{") || label.contains("\\u{"), "{other:?} and {label:?} look alike");
                }
            }
        }
    }
}

/// A check's channel as a student's process may write it: frames read until the end, the first broken
/// one or the one past [`MAX_FRAMES`], never a panic; no frame longer than the limit comes out, no
/// more frames than the limit, and every OUTPUT frame's tensors are exactly as many bytes as their shapes
/// and element types say.
pub fn tape(bytes: &[u8]) {
    let mut frames = tape::Frames::new(bytes);
    let (mut total, mut count) = (0usize, 0usize);
    loop {
        match frames.next_frame() {
            Ok(Some(frame)) => {
                count += 1;
                assert!(count <= MAX_FRAMES, "frame {count} came out");
                assert!(frame.payload.len() <= MAX_FRAME, "a frame of {} bytes", frame.payload.len());
                total += frame.payload.len() + 5;
                if frame.tag == anatomy_course::wire::OUTPUT {
                    if let Ok(values) = tape::values(&frame.payload) {
                        for v in values {
                            let n: usize = v.shape.iter().product();
                            assert_eq!(n * v.dtype.size(), v.bytes.len(), "{:?} {:?}", v.dtype, v.shape);
                        }
                    }
                }
            }
            Ok(None) => {
                assert_eq!(total, bytes.len(), "a clean end before the bytes ended");
                break;
            }
            Err(tape::Broken::TooLarge(n)) => {
                assert!(n as usize > MAX_FRAME);
                break;
            }
            Err(tape::Broken::TooMany) => {
                assert_eq!(count, MAX_FRAMES, "refused after {count} frames");
                break;
            }
            Err(_) => break,
        }
    }
}

/// A roster, and each of its lines as a Canvas download's file name: read or refused in one line, never a
/// panic; every field within its bound and free of control characters, no two students sharing an id, a
/// roster with a quote its line leaves open refused, and a download's id made of digits only.
pub fn roster(bytes: &[u8]) {
    let text = std::str::from_utf8(bytes).map(|t| t.strip_prefix('\u{feff}').unwrap_or(t));
    if text.is_ok_and(|t| rosters::unclosed_quote(t).is_some()) {
        assert!(rosters::read(bytes).is_err(), "a quote left open, read");
    }
    match rosters::read(bytes) {
        Ok(roster) => {
            assert!(!roster.students.is_empty() && roster.students.len() <= rosters::MAX_STUDENTS);
            let mut ids = std::collections::BTreeSet::new();
            for s in &roster.students {
                assert!(ids.insert(&s.id), "two students with the id {:?}", s.id);
                for field in [&s.name, &s.id, &s.sis_id, &s.login, &s.section] {
                    assert!(!field.chars().any(char::is_control), "{field:?}");
                }
            }
        }
        Err(why) => assert!(!why.contains('\n'), "{why:?}"),
    }
    for line in String::from_utf8_lossy(bytes).lines() {
        if let Some(d) = rosters::canvas_download(line) {
            assert!(!d.user_id.is_empty() && d.user_id.bytes().all(|b| b.is_ascii_digit()), "{d:?}");
            assert!(!d.file.is_empty(), "{line:?}");
        }
    }
}

/// What a check printed, as a learner reads it under the verdict (the first byte says how much more the
/// check printed than was kept, in KiB): no character but the line break and the tab that a terminal would
/// obey, at most the lines and columns shown, and the bytes left out counted whenever any were.
pub fn printed(bytes: &[u8]) {
    let Some((&more, kept)) = bytes.split_first() else { return };
    let total = kept.len() + ((more as usize) << 10);
    let Some(out) = prints::shown(kept, total) else {
        assert_eq!(total, 0);
        return;
    };
    assert!(!out.chars().any(|c| c.is_control() && c != '\n' && c != '\t'), "{out:?}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() <= prints::SHOWN_LINES + 1, "{} lines", lines.len());
    for line in &lines {
        assert!(line.chars().count() <= prints::SHOWN_COLUMNS * 10 + 40, "{line:?}");
    }
    if more > 0 {
        assert!(lines.last().is_some_and(|l| l.contains("more bytes not shown")), "{out:?}");
    }
}
