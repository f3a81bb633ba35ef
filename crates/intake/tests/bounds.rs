//! The reader's stack holds at the token limit: each of the shapes that cost syn the most stack per token
//! (found by measuring; see crates/intake/src/bounds.rs) is read at just under MAX_TOKENS tokens, on the
//! reader's stack, in this build's profile. A build whose syn takes more stack a token (an unoptimised
//! one takes ten times as much) aborts here with a stack overflow instead of in a class. Just over the
//! limit, the same shapes are refused unread, with the limit named.
use anatomy_course::forbidden::{ATTENTION, CROSS_ENTROPY, NORMS};
use anatomy_intake::bounds::{check_text, MAX_TOKENS};
use anatomy_intake::rules::{check, Verdict};

/// (name, text before, the part repeated and its tokens, the innermost text, the closing part repeated
/// with its tokens, text after)
type Shape = (&'static str, &'static str, &'static str, usize, &'static str, &'static str, usize, &'static str);

const SHAPES: &[Shape] = &[
    ("references in a type", "fn f(x: ", "&", 1, "f64", "", 0, ") {}"),
    ("returns", "fn f() { ", "return ", 1, "()", "", 0, "; }"),
    ("closures", "fn f() { let g = ", "|| ", 2, "1", "", 0, "; }"),
    ("generic types", "fn f(x: ", "V<", 2, "f64", ">", 1, ") {}"),
    ("function pointer types", "type T = ", "fn() -> ", 4, "u8", "", 0, ";"),
    ("raw pointer types", "type T = ", "*const ", 2, "u8", "", 0, ";"),
    ("ranges", "fn f() { let x = ", ".. ", 2, "1", "", 0, "; }"),
    ("assignments", "fn f() { ", "x = ", 2, "1", "", 0, "; }"),
    ("negations", "fn f() -> f64 { ", "- ", 1, "1.0", "", 0, " }"),
    ("field chains", "fn f() { let y = x", ".a", 2, "", "", 0, "; }"),
    ("else-if chains", "fn f(a: bool) { if a {} ", "else if a {} ", 4, "", "", 0, "}"),
];

#[test]
fn the_costliest_shapes_are_read_at_the_limit_and_refused_past_it() {
    let forbidden = [&ATTENTION, &NORMS, &CROSS_ENTROPY];
    for &(name, before, part, opening, inner, close, closing, after) in SHAPES {
        let text = |n: usize| format!("{before}{}{inner}{}{after}", part.repeat(n), close.repeat(n));
        let per_level = opening + closing;
        let n = (MAX_TOKENS - 64) / per_level;
        let within = text(n);
        assert_eq!(check_text(&within).unwrap(), None, "{name} at {n} levels is within the limits");
        let verdict = check(&within, &[], &forbidden);
        assert!(!matches!(verdict, Verdict::Beyond(_)), "{name} at {n} levels: {verdict:?}");
        let beyond = text(MAX_TOKENS / per_level + 8);
        match check(&beyond, &[], &forbidden) {
            Verdict::Beyond(r) => assert!(r.message.contains("16384 tokens"), "{name}: {r:?}"),
            other => panic!("{name} past the limit was read: {other:?}"),
        }
    }
}
