//! How far the grader reads into a student's file: the limits every recursive reader of student bytes
//! sits behind, and the stack it runs on.
//!
//! A Rust parser (syn), the rules' walk over the tokens and the similarity tokenizer descend one call per
//! level of nesting, and a student decides how deep a file nests: a 10 KB expression a thousand levels
//! deep overflowed the grader's stack and aborted the whole class (exit 134, no row for anyone). So every
//! file is first lexed by proc-macro2 (whose lexer and whose drop use a heap stack, not the call stack)
//! and measured by [`measure`], a loop with its own stack, against two limits:
//!
//! - [`MAX_DEPTH`] levels of brackets (`(`, `[`, `{`). The deepest reference solution nests 5, the
//!   deepest file of this whole project 11.
//! - [`MAX_TOKENS`] tokens (words, symbols, literals). The longest reference solution has 300, the longest
//!   file of this project 6,548. Nesting without brackets (`&&&&T`, `return return x`, `!!!x`,
//!   `a.b.c.d`, `V<V<V<T>>>`) costs syn one call per token or two, so the token count bounds it.
//!
//! A file past either limit fails its own cell with a one-line reason that names the limit. The parse and
//! the walks then run on a thread of their own with a [`READER_STACK`] stack ([`on_reader_stack`]),
//! sized by measurement: the costliest shape per token found (a type of 16,000 `&`, parsed, visited and
//! dropped) takes 2.5 KB of stack a token with syn optimised as this workspace's profiles build it (opt
//! level 2 in debug builds, 3 in release), so a file at the token limit needs about 41 MiB; the stack
//! leaves three times that. The stack is reserved, not used: an honest file touches a few pages of it.
//! `tests/bounds.rs` parses each of the costly shapes at the limit, so a build that makes syn's frames
//! larger (an unoptimised syn takes ten times the stack) fails there rather than in a class.
use std::str::FromStr;

use proc_macro2::{TokenStream, TokenTree};

/// The most levels of brackets read.
pub const MAX_DEPTH: usize = 64;
/// The most tokens read of one exercise's code.
pub const MAX_TOKENS: usize = 16_384;
/// The stack of the thread that parses and walks a file within those limits. Under the fuzzer
/// (`cfg(fuzzing)`) only the measured need at the token limit and a little more, so that a shape costlier
/// than those measured overflows there, where it is found, rather than hiding in the threefold margin.
#[cfg(not(fuzzing))]
pub const READER_STACK: usize = 128 << 20;
#[cfg(fuzzing)]
pub const READER_STACK: usize = 48 << 20;

/// Where a file went past a limit, and the one-line reason (without the line, which the caller shows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beyond {
    /// 1-based line where the limit was crossed.
    pub line: usize,
    pub message: String,
}

/// Checks a lexed file against [`MAX_DEPTH`] and [`MAX_TOKENS`], in one pass with a heap stack.
pub fn measure(stream: &TokenStream) -> Result<(), Beyond> {
    let mut open = vec![stream.clone().into_iter()];
    let mut count = 0usize;
    while let Some(level) = open.last_mut() {
        let Some(token) = level.next() else {
            open.pop();
            continue;
        };
        count += 1;
        if count > MAX_TOKENS {
            return Err(Beyond {
                line: token.span().start().line,
                message: format!(
                    "is longer than the {MAX_TOKENS} tokens (words, symbols, numbers) the grader reads of one \
                     exercise, where a solution has about 300: hand in that exercise's code alone"
                ),
            });
        }
        if let TokenTree::Group(group) = token {
            if open.len() > MAX_DEPTH {
                return Err(Beyond {
                    line: group.span().start().line,
                    message: format!(
                        "nests brackets more than {MAX_DEPTH} levels deep, the most the grader reads (a solution \
                         needs 5): write the expression flatter, with `let` steps"
                    ),
                });
            }
            open.push(group.stream().into_iter());
        }
    }
    Ok(())
}

/// Lexes `text` and [`measure`]s it: `Ok(None)` when it is within the limits, `Ok(Some(why))` when it
/// is beyond them, `Err` with the lexer's message when it is not Rust tokens at all. Runs on the caller's
/// stack: nothing here recurses.
pub fn check_text(text: &str) -> Result<Option<Beyond>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let stream = TokenStream::from_str(text).map_err(|e| e.to_string())?;
    Ok(measure(&stream).err())
}

/// Runs `read` on a thread with a [`READER_STACK`] stack and returns what it returns; a reader that
/// panics (a bug of the parser's, which the fuzzing harness looks for) is the one-line reason of that
/// file, never the end of the class.
pub fn on_reader_stack<T: Send>(read: impl FnOnce() -> T + Send) -> Result<T, String> {
    std::thread::scope(|scope| {
        let reader = std::thread::Builder::new()
            .name("intake-reader".into())
            .stack_size(READER_STACK)
            .spawn_scoped(scope, read)
            .map_err(|e| format!("the grader could not start its reader: {e}"))?;
        reader.join().map_err(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            format!("the grader's reader failed on this file ({what}): tell the instructor")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beyond(text: &str) -> Option<Beyond> {
        check_text(text).expect("lexes")
    }

    #[test]
    fn the_limits_are_counted_exactly() {
        // MAX_DEPTH brackets inside the file's own level are read; one more is not.
        let nested = |n: usize| format!("fn f() -> u8 {{ {}1{} }}", "(".repeat(n - 1), ")".repeat(n - 1));
        assert_eq!(beyond(&nested(MAX_DEPTH)), None);
        let too_deep = beyond(&nested(MAX_DEPTH + 1)).expect("beyond");
        assert!(too_deep.message.contains("more than 64 levels"), "{too_deep:?}");
        assert_eq!(too_deep.line, 1);
        // A token is a word, a symbol or a literal; a group counts once, its contents apart.
        let flat = |n: usize| "x ".repeat(n);
        assert_eq!(beyond(&flat(MAX_TOKENS)), None);
        let long = beyond(&format!("{}\n\nx", flat(MAX_TOKENS))).expect("beyond");
        assert!(long.message.contains("16384 tokens"), "{long:?}");
        assert_eq!(long.line, 3);
        assert_eq!(beyond("fn f() { (1) }"), None);
        assert!(check_text("fn f( {").is_err());
    }

    #[test]
    fn a_panicking_reader_is_one_files_reason() {
        let why = on_reader_stack(|| -> u8 { panic!("a parser's bug") }).unwrap_err();
        assert!(why.contains("a parser's bug") && why.contains("tell the instructor"), "{why}");
        assert_eq!(on_reader_stack(|| 7).unwrap(), 7);
    }
}
