//! What a student's code printed during a check, as a learner reads it under the verdict: the first bytes
//! the grader kept of the check's output, made safe for a terminal and a notebook, and cut to a screen.
//!
//! A student decides these bytes, so nothing in them may move the cursor, clear the screen, change colours
//! or hide text: every control character but the line break and the tab, and every character that shows
//! nothing, is written as an escape (`\u{1b}`); bytes that are not UTF-8 are written as `\xNN`. What is
//! cut is said, in lines and bytes, so that a learner knows the print went on.

/// How many lines of a check's output are shown.
pub const SHOWN_LINES: usize = 40;
/// How many characters of one line are shown.
pub const SHOWN_COLUMNS: usize = 200;

/// The output as shown: `kept` is what the grader kept of it (its first bytes), `total` how many bytes the
/// check printed in all. `None` when it printed nothing.
pub fn shown(kept: &[u8], total: usize) -> Option<String> {
    if total == 0 {
        return None;
    }
    let kept = &kept[..kept.len().min(total)];
    let lines: Vec<&[u8]> = kept.split_inclusive(|&b| b == b'\n').collect();
    let mut out = String::new();
    let mut shown_bytes = 0;
    for line in lines.iter().take(SHOWN_LINES) {
        shown_bytes += line.len();
        let text = escaped(line.strip_suffix(b"\n").unwrap_or(line));
        let mut chars = text.chars();
        let head: String = chars.by_ref().take(SHOWN_COLUMNS).collect();
        let cut = chars.count();
        out += &head;
        if cut > 0 {
            out += &format!(" … ({cut} more characters)");
        }
        out.push('\n');
    }
    if shown_bytes < total {
        // Lines are counted only where every byte printed was kept.
        let more_lines = lines.len().saturating_sub(SHOWN_LINES);
        let lines_words = match more_lines {
            0 => String::new(),
            _ if total > kept.len() => String::new(),
            1 => "1 more line, ".to_string(),
            n => format!("{n} more lines, "),
        };
        out += &format!("… ({lines_words}{} more bytes not shown, of {total} printed)\n", total - shown_bytes);
    }
    Some(out)
}

/// The bytes as text whose every character shows as itself or as an escape.
fn escaped(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\t' {
                out.push(c);
            } else if c == '\r' {
                // A bare carriage return (a progress line) would write over the line before it.
            } else if super::names::hidden(c) {
                out += &format!("\\u{{{:x}}}", c as u32);
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out += &format!("\\x{b:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_printed_shows_nothing() {
        assert_eq!(shown(b"", 0), None);
    }

    #[test]
    fn a_short_print_shows_as_it_is() {
        assert_eq!(shown(b"[2, 5, 64]\nok\n", 14).as_deref(), Some("[2, 5, 64]\nok\n"));
    }

    #[test]
    fn control_characters_and_bad_bytes_are_escapes() {
        let out = shown(b"\x1b[2Jcleared\r\x07\xffx\xe2\x80\x8b\n", 19).unwrap();
        assert_eq!(out, "\\u{1b}[2Jcleared\\u{7}\\xFFx\\u{200b}\n");
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
    }

    #[test]
    fn a_long_print_says_how_much_was_cut() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let out = shown(text.as_bytes(), text.len()).unwrap();
        assert_eq!(out.lines().count(), SHOWN_LINES + 1);
        assert!(out.starts_with("line 0\nline 1\n"));
        let shown_bytes: usize = (0..SHOWN_LINES).map(|i| format!("line {i}\n").len()).sum();
        let last = out.lines().last().unwrap();
        assert_eq!(
            last,
            format!("… (60 more lines, {} more bytes not shown, of {} printed)", text.len() - shown_bytes, text.len())
        );
        // Only the first bytes were kept: the rest is counted, not shown.
        let out = shown(b"first\n", 1_000_000).unwrap();
        assert_eq!(out, "first\n… (999994 more bytes not shown, of 1000000 printed)\n");
        let wide = "x".repeat(SHOWN_COLUMNS + 5);
        assert_eq!(shown(wide.as_bytes(), wide.len()).unwrap(), format!("{} … (5 more characters)\n", &wide[..200]));
    }
}
