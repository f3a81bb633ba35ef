//! A student's name as the grader shows it: the name of their folder, which came from a learning
//! platform's export or a zip file and so is bytes, not always UTF-8 (a zip written on another system
//! keeps its own encoding), and not always visible (a zero-width space, a right-to-left override).
//!
//! [`label`] writes every folder name losslessly and visibly: UTF-8 text as it is, and in its place
//!
//! - `\xNN` for each byte that is not UTF-8 (`caf\xE9` is Latin-1's "café", `caf\xC3\xA9` would be UTF-8's
//!   but is valid and so shown as `café`);
//! - `\u{NNNN}` for a character that shows nothing or looks like a space: control characters, zero-width
//!   and direction marks, other spaces than the ASCII one, and an ASCII space at either end;
//! - `\\` for a backslash, so that the two escapes above cannot be forged by a name that spells them;
//! - in a name that is not in Unicode's composed form (NFC), `\u{NNNN}` for each character that form would
//!   change or reorder (a combining accent, a compatibility character): macOS writes "José" with é as e and
//!   a combining accent, Windows and Linux with é as one character, and the two look the same on a screen
//!   while their bytes differ. The composed one is shown as it is, the other as `Jose\u{301}`.
//!
//! Two different folder names therefore never share a label ([`bytes_of`] turns a label back into the
//! folder name's bytes), and the table, the JSON lines, the CSV, the feedback files, the report and the
//! similarity page, which all use the label, agree on it.
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{is_nfc, is_nfc_quick, IsNormalized, UnicodeNormalization};

/// The label of a folder name (see the module's doc).
pub fn label(name: &OsStr) -> String {
    let bytes = name.as_bytes();
    let mut out = String::with_capacity(bytes.len());
    let last = bytes.len();
    let mut at = 0;
    for chunk in bytes.utf8_chunks() {
        let composed = is_nfc(chunk.valid());
        for c in chunk.valid().chars() {
            let edge = at == 0 || at + c.len_utf8() == last;
            match c {
                '\\' => out.push_str("\\\\"),
                ' ' if edge => out.push_str("\\u{20}"),
                c if hidden(c) || (!composed && normalisation_changes(c)) => {
                    out.push_str(&format!("\\u{{{:X}}}", c as u32))
                }
                c => out.push(c),
            }
            at += c.len_utf8();
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
            at += 1;
        }
    }
    out
}

/// The folder name's bytes a [`label`] stands for: `bytes_of(&label(name))` is always `name`. `None` for
/// text that is not well formed as a label (it also reads a few forms `label` never writes, such as `\x41`).
pub fn bytes_of(label: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(label.len());
    let mut rest = label;
    while let Some(c) = rest.chars().next() {
        if c != '\\' {
            let mut buffer = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            rest = &rest[c.len_utf8()..];
            continue;
        }
        rest = &rest[1..];
        if let Some(after) = rest.strip_prefix('\\') {
            out.push(b'\\');
            rest = after;
        } else if let Some(after) = rest.strip_prefix('x') {
            let hex = after.get(..2)?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &after[2..];
        } else {
            let after = rest.strip_prefix("u{")?;
            let end = after.find('}')?;
            let c = char::from_u32(u32::from_str_radix(&after[..end], 16).ok()?)?;
            let mut buffer = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            rest = &after[end + 1..];
        }
    }
    Some(out)
}

/// A label as Markdown text (a table cell, a heading): a backslash before each mark that would change
/// what it shows — `\\` (so that the label's own escapes render as written), `|` (which would split a
/// table's cell), `` ` ``, `*`, `[`, `]`, `<` and `>` — and nothing else, so that ordinary names stay as
/// they are.
pub fn markdown(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for c in label.chars() {
        if "\\|`*[]<>".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A name as a disk that compares names after normalisation and case folding sees it (macOS's default,
/// and Windows' case folding): two labels with the same key would be one file there.
pub fn disk_key(name: &str) -> String {
    name.nfd().collect::<String>().to_lowercase().nfc().collect()
}

/// A character that composition may change, move or join to another: in a name that is not composed
/// already, it is shown as an escape.
fn normalisation_changes(c: char) -> bool {
    canonical_combining_class(c) != 0 || is_nfc_quick(std::iter::once(c)) != IsNormalized::Yes
}

/// A character that shows nothing, or shows as a space, where a name is printed: written as an escape.
pub(crate) fn hidden(c: char) -> bool {
    c.is_control()
        || (c.is_whitespace() && c != ' ')
        || matches!(c as u32,
            0xAD | 0x34F | 0x61C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F
            | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
            | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFFB | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(bytes: &[u8]) -> String {
        label(OsStr::from_bytes(bytes))
    }

    #[test]
    fn names_that_decode_alike_keep_labels_apart() {
        // Latin-1's é and è are both not UTF-8: decoded with replacement they were the same "caf\u{FFFD}".
        assert_eq!(of(b"caf\xe9"), "caf\\xE9");
        assert_eq!(of(b"caf\xe8"), "caf\\xE8");
        assert_eq!(of("café".as_bytes()), "café");
        assert_eq!(of(b"caf\xef\xbf\xbd"), "caf\u{FFFD}");
        // Invisible and look-alike characters, and a name that spells an escape.
        assert_eq!(of("ana\u{200B}".as_bytes()), "ana\\u{200B}");
        assert_eq!(of("ana\u{A0}b".as_bytes()), "ana\\u{A0}b");
        assert_eq!(of(b" ana "), "\\u{20}ana\\u{20}");
        assert_eq!(of(b"a b"), "a b");
        assert_eq!(of(b"caf\\xE9"), "caf\\\\xE9");
        assert_eq!(of(b"tab\there"), "tab\\u{9}here");
        assert_eq!(of("\u{202E}gpj.exe".as_bytes()), "\\u{202E}gpj.exe");
    }

    #[test]
    fn one_typed_name_in_two_unicode_forms_gives_two_labels_that_look_apart() {
        let (composed, decomposed) = (of("Jos\u{e9}".as_bytes()), of("Jose\u{301}".as_bytes()));
        assert_eq!(composed, "José");
        assert_eq!(decomposed, "Jose\\u{301}");
        // A compatibility character (the Ångström sign) in a name is shown; a combining accent on a letter
        // that has no composed form is left as it is, since its name is composed already.
        assert_eq!(of("\u{212B}ngstr\u{f6}m".as_bytes()), "\\u{212B}ngström");
        assert_eq!(of("x\u{301}".as_bytes()), "x\u{301}");
        assert_eq!(disk_key("José"), disk_key("JOSE\u{301}"));
        assert_ne!(disk_key("José"), disk_key("Jose"));
        for name in ["Jose\u{301}", "\u{212B}ngstr\u{f6}m"] {
            assert_eq!(bytes_of(&of(name.as_bytes())).as_deref(), Some(name.as_bytes()));
        }
    }

    #[test]
    fn a_label_in_markdown_renders_as_itself() {
        assert_eq!(markdown("student03-bob"), "student03-bob");
        assert_eq!(markdown("caf\\xE9"), "caf\\\\xE9");
        assert_eq!(markdown("+cmd|' -C calc'!A0"), "+cmd\\|' -C calc'!A0");
        assert_eq!(markdown("<b>*x*</b>"), "\\<b\\>\\*x\\*\\</b\\>");
    }

    #[test]
    fn every_label_gives_its_bytes_back() {
        let names: [&[u8]; 9] = [
            b"caf\xe9",
            b"caf\\xE9",
            b"\\",
            b"\\u{20}",
            b" ",
            b"\xff\xfe\x00x",
            "Zoë \u{200D}\u{FEFF}".as_bytes(),
            b"=SUM(A1:A9)",
            b"\xe2\x82",
        ];
        for name in names {
            let shown = of(name);
            assert_eq!(bytes_of(&shown).as_deref(), Some(name), "{shown}");
        }
        assert_eq!(bytes_of("\\q"), None);
        assert_eq!(bytes_of("\\x4"), None);
    }
}
