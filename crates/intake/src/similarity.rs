//! The similarity report: which students handed in files that match beyond what the task forces on
//! everyone.
//!
//! This is MOSS's method (Schleimer, Wilkerson & Aiken, *Winnowing: local algorithms for document
//! fingerprinting*, 2003) over Rust tokens:
//!
//! 1. **Tokens, normalised.** Each file is read by proc-macro2's tokenizer, so comments and whitespace are
//!    gone; doc comments are dropped too. Names the student chose (variables, parameters, helper
//!    functions) all become one token, so renaming changes nothing; keywords, punctuation and the names of
//!    the API called (`.softmax`, `Tensor::`, `Kind::Float`) stay, since those carry the structure.
//! 2. **Fingerprints.** Every run of [`K`] tokens is hashed, and of each window of [`W`] consecutive hashes
//!    the smallest is kept (winnowing): any match of at least `K + W − 1` tokens is guaranteed to share a
//!    fingerprint, whatever the order of the items or statements around it.
//! 3. **Base code removed.** Fingerprints of the stub and of the reference solution are dropped from every
//!    file, and so are those found in more than half of the class's files (when there are at least four):
//!    what the signature, the exercise's own shape or a common idiom forces on everyone is no evidence.
//! 4. **Score.** For two students, the share of fingerprints they have in common out of all the ones
//!    either has (Jaccard, 0 to 1), reported when it reaches the threshold and they share at least
//!    [`MIN_SHARED`] fingerprints; with the regions of lines where the shared fingerprints lie.
//!
//! Dolos (Ghent University's tool, the same method over tree-sitter parse trees) reads Rust too: its
//! parser package, `@dodona/dolos-parsers` 1.4.1, carries a Rust grammar. It is not used here because it
//! needs Node.js and a native build of the parsers on the grading machine, while this report is part of
//! the one `anatomy` binary, works offline, shares the tokenizer of the rules and takes the stub and the
//! reference out as base code; an instructor who prefers Dolos can run it on the same class folder.

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use serde::Serialize;

use crate::bounds;

/// Tokens per hashed run.
pub const K: usize = 8;
/// Hashes per winnowing window.
pub const W: usize = 4;
/// The fewest shared fingerprints a reported pair has: below that, a match is a line or two.
pub const MIN_SHARED: usize = 4;
/// The default threshold of the score.
pub const THRESHOLD: f64 = 0.5;

/// One student's file for an exercise.
#[derive(Debug, Clone)]
pub struct StudentFile {
    pub student: String,
    pub text: String,
}

/// Two students whose files match.
#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    pub exercise: String,
    pub students: [String; 2],
    /// Shared fingerprints over all fingerprints of either (after the base code is removed), 0 to 1.
    pub score: f64,
    pub shared: usize,
    /// Line ranges (1-based, inclusive) that match: `[[a_from, a_to], [b_from, b_to]]`.
    pub regions: Vec<[[usize; 2]; 2]>,
    /// How much the score can say, from the exercise's own size (see [`Evidence`]).
    pub evidence: Evidence,
    /// The size of one answer to the exercise, in fingerprints ([`answer_size`]): what `shared` is weighed
    /// against.
    pub answer: usize,
}

/// How much a pair's score can say. An exercise whose answer is a few lines leaves little to choose: two
/// students who each write its most natural form share most of what they wrote, and a copy looks no
/// different. So a pair is strong evidence only when what it shares beyond the base code is more than a
/// whole answer's worth: more fingerprints than [`answer_size`] (the reference's own, beyond the stub).
/// Below that it is weak: listed with the word, and never counted as flagged on its score alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Evidence {
    Strong,
    Weak,
}

/// The size of an answer: the fingerprints of `reference` that the stub does not already have.
pub fn answer_size(stub: &str, reference: &str) -> usize {
    let given: BTreeSet<u64> = tokens(stub).map(|t| fingerprints(&t).into_keys().collect()).unwrap_or_default();
    tokens(reference).map(|t| fingerprints(&t).into_keys().filter(|h| !given.contains(h)).count()).unwrap_or(0)
}

/// A normalised token and the line it is on.
type Token = (String, usize);

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self",
    "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "Some", "None", "Ok",
    "Err",
];

/// The file's tokens, normalised as the module's doc says; `None` when it does not tokenize or is beyond
/// the [`bounds`] (which also bound how deep [`flatten`] descends; the report lists such a file as not
/// compared, with [`bounds::check_text`]'s reason).
pub fn tokens(text: &str) -> Option<Vec<Token>> {
    let stream = TokenStream::from_str(text.strip_prefix('\u{feff}').unwrap_or(text)).ok()?;
    bounds::measure(&stream).ok()?;
    let mut out = Vec::new();
    flatten(stream, &mut out);
    Some(out)
}

fn flatten(stream: TokenStream, out: &mut Vec<Token>) {
    let trees: Vec<TokenTree> = stream.into_iter().collect();
    let mut i = 0;
    while i < trees.len() {
        let line = trees[i].span().start().line;
        match &trees[i] {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                // A doc comment is an attribute `#[doc = "…"]` (or `#![doc = …]`): skip it whole.
                let bang = matches!(trees.get(i + 1), Some(TokenTree::Punct(b)) if b.as_char() == '!');
                let at = i + 1 + usize::from(bang);
                if let Some(TokenTree::Group(g)) = trees.get(at) {
                    let first = g.stream().into_iter().next();
                    if g.delimiter() == Delimiter::Bracket && matches!(&first, Some(TokenTree::Ident(d)) if d == "doc")
                    {
                        i = at + 1;
                        continue;
                    }
                }
                out.push(("#".into(), line));
            }
            TokenTree::Punct(p) => out.push((p.as_char().to_string(), line)),
            TokenTree::Literal(_) => out.push(("<lit>".into(), line)),
            TokenTree::Ident(id) => {
                let name = id.to_string();
                let after_path_or_dot =
                    i >= 1 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '.' || p.as_char() == ':');
                let before_path = matches!(trees.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':')
                    && matches!(trees.get(i + 2), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                let kept = KEYWORDS.contains(&name.as_str()) || after_path_or_dot || before_path;
                out.push((if kept { name } else { "<name>".into() }, line));
            }
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::None => ("", ""),
                };
                if !open.is_empty() {
                    out.push((open.into(), line));
                }
                flatten(g.stream(), out);
                if !close.is_empty() {
                    out.push((close.into(), g.span_close().start().line));
                }
            }
        }
        i += 1;
    }
}

/// FNV-1a over the tokens of one run: the same on every machine and every run.
fn hash(run: &[Token]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (t, _) in run {
        for b in t.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The winnowed fingerprints of a token list, each with the lines its run spans.
pub fn fingerprints(tokens: &[Token]) -> BTreeMap<u64, Vec<[usize; 2]>> {
    let mut kept: BTreeMap<u64, Vec<[usize; 2]>> = BTreeMap::new();
    if tokens.len() < K {
        return kept;
    }
    let hashes: Vec<(u64, [usize; 2])> = tokens.windows(K).map(|run| (hash(run), [run[0].1, run[K - 1].1])).collect();
    let mut last: Option<usize> = None;
    for start in 0..hashes.len().saturating_sub(W - 1).max(1) {
        let window = start..(start + W).min(hashes.len());
        // The rightmost smallest hash of the window (the paper's rule, so a run of equal hashes counts once).
        let pick = window.clone().rev().min_by_key(|&j| hashes[j].0).expect("a window is not empty");
        if last != Some(pick) {
            kept.entry(hashes[pick].0).or_default().push(hashes[pick].1);
            last = Some(pick);
        }
    }
    kept
}

/// The pairs of students whose files for `exercise` match at `threshold` or above, best first. `base` is
/// the code everyone was given or shown: the stub first, then the reference solution (its size beyond the
/// stub decides each pair's [`Evidence`]), then any other.
pub fn compare(exercise: &str, entries: &[StudentFile], base: &[&str], threshold: f64) -> Vec<Pair> {
    let answer = match base {
        [stub, reference, ..] => answer_size(stub, reference),
        _ => 0,
    };
    let mut ignored: BTreeSet<u64> =
        base.iter().filter_map(|b| tokens(b)).flat_map(|t| fingerprints(&t).into_keys()).collect();
    let prints: Vec<BTreeMap<u64, Vec<[usize; 2]>>> =
        entries.iter().map(|e| tokens(&e.text).map(|t| fingerprints(&t)).unwrap_or_default()).collect();
    if entries.len() >= 4 {
        let mut count: BTreeMap<u64, usize> = BTreeMap::new();
        for p in &prints {
            for &h in p.keys() {
                *count.entry(h).or_default() += 1;
            }
        }
        ignored.extend(count.into_iter().filter(|&(_, n)| n * 2 > entries.len()).map(|(h, _)| h));
    }
    let own: Vec<BTreeSet<u64>> =
        prints.iter().map(|p| p.keys().copied().filter(|h| !ignored.contains(h)).collect()).collect();
    let mut pairs = Vec::new();
    for a in 0..entries.len() {
        for b in a + 1..entries.len() {
            let shared: Vec<u64> = own[a].intersection(&own[b]).copied().collect();
            let union = own[a].union(&own[b]).count();
            if union == 0 || shared.len() < MIN_SHARED {
                continue;
            }
            let score = shared.len() as f64 / union as f64;
            if score < threshold {
                continue;
            }
            let mut lines: Vec<([usize; 2], [usize; 2])> = Vec::new();
            for h in &shared {
                lines.push((prints[a][h][0], prints[b][h][0]));
            }
            pairs.push(Pair {
                exercise: exercise.to_string(),
                students: [entries[a].student.clone(), entries[b].student.clone()],
                score: (score * 1000.0).round() / 1000.0,
                shared: shared.len(),
                regions: regions(lines),
                evidence: if shared.len() > answer { Evidence::Strong } else { Evidence::Weak },
                answer,
            });
        }
    }
    pairs.sort_by(|x, y| y.score.total_cmp(&x.score).then_with(|| x.students.cmp(&y.students)));
    pairs
}

/// Merges the matching line spans into regions: runs of spans that overlap or touch in both files at once
/// (a block moved elsewhere in the second file starts a region of its own).
fn regions(mut spans: Vec<([usize; 2], [usize; 2])>) -> Vec<[[usize; 2]; 2]> {
    spans.sort();
    let mut out: Vec<[[usize; 2]; 2]> = Vec::new();
    for (a, b) in spans {
        let touches =
            |last: &[[usize; 2]; 2]| a[0] <= last[0][1] + 1 && b[0] + 1 >= last[1][0] && b[0] <= last[1][1] + 1;
        match out.iter_mut().rev().find(|last| touches(last)) {
            Some(last) => {
                last[0][1] = last[0][1].max(a[1]);
                last[1][0] = last[1][0].min(b[0]);
                last[1][1] = last[1][1].max(b[1]);
            }
            _ => out.push([a, b]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renaming_and_comments_change_no_token_and_the_api_stays() {
        let a = tokens("// one\nfn f(x: &Tensor) -> Tensor { let y = x.softmax(-1, Kind::Float); y }").unwrap();
        let b = tokens("/// doc\nfn g(input: &Tensor) -> Tensor {\n    /* two */ let out = input.softmax(-2, Kind::Float);\n    out\n}")
            .unwrap();
        let names = |t: &[Token]| t.iter().map(|(s, _)| s.clone()).collect::<Vec<_>>();
        assert_eq!(names(&a), names(&b));
        assert!(names(&a).contains(&"softmax".to_string()) && names(&a).contains(&"Float".to_string()));
        assert_eq!(b.last().unwrap().1, 5, "the closing brace is on line 5");
    }

    #[test]
    fn a_match_smaller_than_one_answer_is_weak_evidence_and_a_larger_one_strong() {
        let stub = "pub fn f(x: &Tensor) -> Tensor { todo!() }";
        let reference = "pub fn f(x: &Tensor) -> Tensor { let m = x.mean_dim(-1, true, Kind::Float); (x - m) * 2.0 }";
        // Two students who wrote one natural line alike (other names): a perfect score, but less than the
        // reference's own fingerprints in common.
        let short = |name: &str| {
            format!("pub fn f(x: &Tensor) -> Tensor {{ let {name} = x.square().mean_dim(-1, true, Kind::Float); x / {name}.sqrt() }}")
        };
        let entries = ["a", "b"].map(|s| StudentFile { student: s.into(), text: short(&format!("v_{s}")) });
        let pairs = compare("f", &entries, &[stub, reference], 0.0);
        assert_eq!(pairs.len(), 1, "{pairs:?}");
        assert_eq!((pairs[0].score, pairs[0].evidence), (1.0, Evidence::Weak), "{pairs:?}");
        assert!(pairs[0].shared <= pairs[0].answer && pairs[0].answer == answer_size(stub, reference));
        // The same two files made long (a copied helper of many lines): more than an answer's worth shared.
        let helper = (0..12)
            .map(|i| format!("let t{i} = x.exp().log_softmax({i}, Kind::Double).sum(Kind::Float);"))
            .collect::<String>();
        let long = |name: &str| format!("fn g(x: &Tensor) {{ {helper} }}\n{}", short(name));
        let entries = ["a", "b"].map(|s| StudentFile { student: s.into(), text: long(&format!("v_{s}")) });
        let pairs = compare("f", &entries, &[stub, reference], 0.0);
        assert_eq!(pairs[0].evidence, Evidence::Strong, "{pairs:?}");
        assert!(pairs[0].shared > pairs[0].answer);
    }

    #[test]
    fn every_long_enough_match_shares_a_fingerprint() {
        // Two token lists that share one run of K + W - 1 tokens somewhere in the middle.
        let tok = |names: &[&str]| names.iter().enumerate().map(|(i, s)| (s.to_string(), i + 1)).collect::<Vec<_>>();
        let shared: Vec<String> = (0..K + W - 1).map(|i| format!("s{i}")).collect();
        let mut a: Vec<String> = (0..20).map(|i| format!("a{i}")).collect();
        let mut b: Vec<String> = (0..13).map(|i| format!("b{i}")).collect();
        a.splice(7..7, shared.clone());
        b.splice(3..3, shared);
        let fa = fingerprints(&tok(&a.iter().map(String::as_str).collect::<Vec<_>>()));
        let fb = fingerprints(&tok(&b.iter().map(String::as_str).collect::<Vec<_>>()));
        assert!(fa.keys().any(|h| fb.contains_key(h)));
    }
}
