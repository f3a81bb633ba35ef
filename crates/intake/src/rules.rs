//! The stubs' rules, checked before a file is compiled: what an exercise file may use.
//!
//! A stub says "write it with tensor operations, not with `layer_norm`"; a check alone cannot tell a
//! student who did from one who called the finished operation, since both return the right numbers. So
//! every file is read by a Rust parser first and refused, with a message that names what it used, when it
//! reaches for something its exercise does not allow:
//!
//! - **the learner's crate** only through the items the stub imports (e.g.
//!   `transformer_anatomy::exercises::support::Projections`): every other mention of `transformer_anatomy`
//!   is refused, so a rename (`use … as`), a glob or a path written inside a macro cannot reach the
//!   crate's finished modules; the grader's crates (`anatomy_course`, `anatomy_intake`, `anatomy_checks`,
//!   `anatomy_grade`, `anatomy_report`, `anatomy_gradebook`, `anatomy_class`, `anatomy_platforms`) not at all;
//! - **the finished operations the exercise is about** ([`Forbidden`]): libtorch's attention kernels, its
//!   layer norm, its cross-entropy — by what a name does, wherever it is written (method calls, paths, `use`
//!   trees, function pointers, macro bodies): a name is refused when it is one through which `tch` or the
//!   learner's crate reach the operation (`anatomy_course::forbidden::REACHING`), and not where it is the
//!   file's own — where the file defines it (a signature, an item, a binding the parser reads; `fn name`
//!   inside a macro's input defines nothing), or where a plain use of it can only mean the file's own
//!   definition (no `.` or `::` before it, not in a `use` or a macro, and no glob import from outside the
//!   file that could bring another). A helper named `layer_norm_moments` reaches nothing of LibTorch's;
//! - **anything that reads beyond the file or escapes Rust's checks**, in every exercise: `unsafe`,
//!   `extern` (crates and foreign functions), `include!`/`include_str!`/`include_bytes!` (by name, renamed
//!   or handed to a macro too), `#[path]` and any module but `mod name { … }`, `crate::` and `super::` above
//!   the file (a macro's `super` counted from the top of the file, where it expands), an attribute a
//!   macro's input names (`#[$x]`) or a `#` without its brackets, linker attributes (`#[no_mangle]`, …: the
//!   names anywhere in the file, and any name in an attribute's brackets, as `cfg_attr` writes them),
//!   inline assembly, and TorchScript (`CModule`), which runs code no parser here reads.
//!
//! The rules look at identifiers, which stable Rust has no way to assemble from pieces (a macro can paste
//! tokens it was given, never make a new name out of strings), so a name the rules forbid cannot appear
//! without being spelled. A raw identifier (`r#mod`) is an identifier, never the keyword it spells; a `#!`
//! first line (a script's, which rustc skips) is skipped too. The sandbox still stands behind them: a file
//! that passes the rules is compiled and run exactly as before.
use std::collections::BTreeSet;
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use syn::visit::Visit;

use crate::bounds;

pub use anatomy_course::forbidden::{Forbidden, ATTENTION, CROSS_ENTROPY, NORMS};

/// Attributes that change what the linker sees, refused by name anywhere in a file (`link` and `used`, words
/// a student may well use, only inside an attribute's brackets).
const LINKER: [&str; 6] = ["no_mangle", "export_name", "link_section", "link_name", "link_ordinal", "naked"];

/// Why a file was refused, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 1-based line of the first thing refused.
    pub line: usize,
    pub message: String,
}

/// What reading the file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing the rules refuse.
    Allowed,
    Refused(Refusal),
    /// The parser cannot read it (a syntax error, most likely): the compiler's message says more, and a
    /// file the compiler accepts but the parser cannot read is refused with this message.
    Unreadable(Refusal),
    /// Past what the grader reads ([`bounds::MAX_DEPTH`], [`bounds::MAX_TOKENS`]): refused unread.
    Beyond(Refusal),
}

/// Checks one file's text against the rules of an exercise: `uses` are the learner's crate's items its
/// stub imports (paths below `transformer_anatomy::`), `forbidden` the finished operations it asks for.
/// The file is measured first ([`bounds`]); within the limits it is parsed and walked on the reader's
/// stack, so no file can overflow the grader's.
pub fn check(text: &str, uses: &[&str], forbidden: &[&Forbidden]) -> Verdict {
    let text = without_shebang(text.strip_prefix('\u{feff}').unwrap_or(text));
    bounds::on_reader_stack(|| read(&text, uses, forbidden))
        .unwrap_or_else(|message| Verdict::Beyond(Refusal { line: 1, message }))
}

/// The text with a script's `#!` first line blanked (its line kept, so that lines keep their numbers).
/// rustc skips such a line unless what follows `#!`, past whitespace and comments, is `[` (an inner
/// attribute, `#![…]`, whose line is code); comments are where that goes wrong, so only a line that is
/// plainly a path to an interpreter is blanked: `#!` then `/` and a letter (no comment), and no `[` on it.
/// Any other `#!` line is read as it is, and one the parser cannot read is refused once the compiler
/// accepts it.
pub fn without_shebang(text: &str) -> std::borrow::Cow<'_, str> {
    let first = text.lines().next().unwrap_or_default();
    let script = first.strip_prefix("#!").is_some_and(|rest| {
        let path = rest.trim_start_matches([' ', '\t']);
        path.starts_with('/') && !path.starts_with("//") && !path.starts_with("/*") && !rest.contains('[')
    });
    if !script {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(format!("{}{}", " ".repeat(first.chars().count()), &text[first.len()..]))
}

fn read(text: &str, uses: &[&str], forbidden: &[&Forbidden]) -> Verdict {
    let tokens = match TokenStream::from_str(text) {
        Ok(t) => t,
        Err(e) => {
            let line = e.span().start().line;
            return Verdict::Unreadable(Refusal { line, message: format!("the grader cannot read it: {e}") });
        }
    };
    if let Err(b) = bounds::measure(&tokens) {
        return Verdict::Beyond(Refusal { line: b.line, message: b.message });
    }
    let file = match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(f) => f,
        Err(e) => {
            let line = e.span().start().line;
            return Verdict::Unreadable(Refusal { line, message: format!("the grader cannot read it: {e}") });
        }
    };
    let mut imports = Imports { uses, ..Imports::default() };
    imports.visit_file(&file);
    if let Some(r) = imports.refused.take() {
        return Verdict::Refused(r);
    }
    let mut scan = Scan { imports: &imports, forbidden, uses, refused: None };
    scan.stream(tokens, Inside::default());
    match scan.refused {
        Some(r) => Verdict::Refused(r),
        None => Verdict::Allowed,
    }
}

/// An identifier's place in the file: (line, column).
type Place = (usize, usize);

fn place(ident: &proc_macro2::Ident) -> Place {
    let start = ident.span().start();
    (start.line, start.column)
}

/// What the parser sees and the token scan cannot: the `use transformer_anatomy::…` items that import only
/// what the stub hands over (the places of their `transformer_anatomy`, which the scan then lets pass), the
/// names the file defines (the places of a signature's, an item's or a binding's name, and the names
/// themselves), every name written inside a `use` item, and whether a glob import could bring names from
/// outside the file. syn does not look into a macro's input, so `m!(fn layer_norm, x)` defines nothing and
/// is read as a use.
#[derive(Default)]
struct Imports<'a> {
    uses: &'a [&'a str],
    allowed: BTreeSet<Place>,
    defined: BTreeSet<Place>,
    own: BTreeSet<String>,
    in_use_items: BTreeSet<Place>,
    foreign_glob: bool,
    refused: Option<Refusal>,
}

impl Imports<'_> {
    fn define(&mut self, ident: &proc_macro2::Ident) {
        self.defined.insert(place(ident));
        self.own.insert(ident.to_string().trim_start_matches("r#").to_string());
    }
}

impl<'ast> Visit<'ast> for Imports<'_> {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut leaves = Vec::new();
        let mut roots = Vec::new();
        flatten(&item.tree, &mut Vec::new(), &mut leaves, &mut roots);
        self.in_use_items.extend(idents_of(&item.tree));
        // A glob brings names the file does not spell. Only a glob of the modules around this one (`super::*`,
        // `self::*`), whose names the file defines or imports by name, is known to bring nothing else: through
        // any other path (`super::nn::*`, where `nn` is tch's) it may bring a library's names.
        if leaves.iter().any(|(path, glob, _)| *glob && !path.iter().all(|s| s == "self" || s == "super")) {
            self.foreign_glob = true;
        }
        let ours: Vec<&(Vec<String>, bool, usize)> =
            leaves.iter().filter(|(path, _, _)| path.first().is_some_and(|s| s == "transformer_anatomy")).collect();
        if ours.is_empty() {
            return;
        }
        for (path, glob, line) in &ours {
            let below = path[1..].join("::");
            if *glob || !self.uses.contains(&below.as_str()) {
                let shown = if *glob { format!("{}::*", path.join("::")) } else { path.join("::") };
                self.refused.get_or_insert(Refusal {
                    line: *line,
                    message: format!("imports `{shown}`, {}", allowance(self.uses)),
                });
                return;
            }
        }
        self.allowed.extend(roots);
    }

    fn visit_signature(&mut self, sig: &'ast syn::Signature) {
        self.define(&sig.ident);
        syn::visit::visit_signature(self, sig);
    }

    fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
        self.define(&pat.ident);
        syn::visit::visit_pat_ident(self, pat);
    }

    fn visit_item(&mut self, item: &'ast syn::Item) {
        let ident = match item {
            syn::Item::Struct(i) => Some(&i.ident),
            syn::Item::Enum(i) => Some(&i.ident),
            syn::Item::Union(i) => Some(&i.ident),
            syn::Item::Trait(i) => Some(&i.ident),
            syn::Item::Type(i) => Some(&i.ident),
            syn::Item::Const(i) => Some(&i.ident),
            syn::Item::Static(i) => Some(&i.ident),
            syn::Item::Mod(i) => Some(&i.ident),
            syn::Item::Macro(i) => i.ident.as_ref(),
            _ => None,
        };
        if let Some(ident) = ident {
            self.define(ident);
        }
        syn::visit::visit_item(self, item);
    }

    /// A macro's tokens, which syn does not parse: a `use` among them (a glob a macro brings in where it
    /// expands) could bring any name, so no plain use counts as the file's own.
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        fn holds_use(stream: proc_macro2::TokenStream) -> bool {
            stream.into_iter().any(|t| match t {
                TokenTree::Ident(id) => id == "use",
                TokenTree::Group(g) => holds_use(g.stream()),
                _ => false,
            })
        }
        if holds_use(mac.tokens.clone()) {
            self.foreign_glob = true;
        }
        syn::visit::visit_macro(self, mac);
    }

    fn visit_field(&mut self, field: &'ast syn::Field) {
        if let Some(ident) = &field.ident {
            self.define(ident);
        }
        syn::visit::visit_field(self, field);
    }
}

/// The places of every identifier in a `use` tree: none of them is a plain use of the file's own name.
fn idents_of(tree: &syn::UseTree) -> Vec<Place> {
    match tree {
        syn::UseTree::Path(p) => std::iter::once(place(&p.ident)).chain(idents_of(&p.tree)).collect(),
        syn::UseTree::Name(n) => vec![place(&n.ident)],
        syn::UseTree::Rename(r) => vec![place(&r.ident), place(&r.rename)],
        syn::UseTree::Glob(_) => Vec::new(),
        syn::UseTree::Group(g) => g.items.iter().flat_map(idents_of).collect(),
    }
}

/// What an exercise may take from the learner's crate, as the end of a sentence.
fn allowance(uses: &[&str]) -> String {
    if uses.is_empty() {
        "but this exercise uses nothing of the learner's crate: write it with `tch` alone".into()
    } else {
        let names: Vec<String> = uses.iter().map(|u| format!("`transformer_anatomy::{u}`")).collect();
        format!("but of the learner's crate this exercise may use only {} (what its stub imports)", names.join(", "))
    }
}

/// The names a file's top-level `use` items bring into scope (renames by their new name; globs bring
/// none that can clash). Empty when the file cannot be parsed, or is beyond the [`bounds`]: the compiler or
/// the rules will say why.
pub fn imported_names(text: &str) -> Vec<String> {
    fn names(tree: &syn::UseTree, out: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => names(&p.tree, out),
            syn::UseTree::Name(n) => out.push(n.ident.to_string()),
            syn::UseTree::Rename(r) => out.push(r.rename.to_string()),
            syn::UseTree::Glob(_) => {}
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| names(t, out)),
        }
    }
    let read = || {
        let mut out = Vec::new();
        let Ok(tokens) = TokenStream::from_str(&without_shebang(text)) else { return out };
        if bounds::measure(&tokens).is_err() {
            return out;
        }
        if let Ok(file) = syn::parse2::<syn::File>(tokens) {
            for item in &file.items {
                if let syn::Item::Use(u) = item {
                    names(&u.tree, &mut out);
                }
            }
        }
        out
    };
    bounds::on_reader_stack(read).unwrap_or_default()
}

/// Every path a `use` tree imports: its segments, whether it is a glob, its line; and the places of the
/// `transformer_anatomy` segments that start a path.
fn flatten(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    leaves: &mut Vec<(Vec<String>, bool, usize)>,
    roots: &mut Vec<Place>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            if prefix.is_empty() && p.ident == "transformer_anatomy" {
                roots.push(place(&p.ident));
            }
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, leaves, roots);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            leaves.push((path, false, n.ident.span().start().line));
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            leaves.push((path, false, r.ident.span().start().line));
        }
        syn::UseTree::Glob(g) => leaves.push((prefix.clone(), true, g.star_token.spans[0].start().line)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten(t, prefix, leaves, roots);
            }
        }
    }
}

/// The scan over every token of the file, macro bodies included.
struct Scan<'a> {
    imports: &'a Imports<'a>,
    forbidden: &'a [&'a Forbidden],
    uses: &'a [&'a str],
    refused: Option<Refusal>,
}

/// Where in the file the scan is: how many inline modules (`mod name { … }`) deep, inside an attribute's
/// brackets (where every name is read as an attribute's), inside a macro's definition or input (where
/// what a name will mean is decided where the macro expands).
#[derive(Clone, Copy, Default)]
struct Inside {
    depth: usize,
    attribute: bool,
    macro_tokens: bool,
}

/// One stream's tokens, read by position: a name or a punctuation mark at `i`, or nothing there.
struct Tokens(Vec<TokenTree>);

impl Tokens {
    fn ident_at(&self, i: usize) -> Option<String> {
        match self.0.get(i) {
            Some(TokenTree::Ident(id)) => Some(id.to_string()),
            _ => None,
        }
    }

    fn punct_at(&self, i: usize, c: char) -> bool {
        matches!(self.0.get(i), Some(TokenTree::Punct(p)) if p.as_char() == c)
    }
}

/// What a name earlier in the stream says of a group later in it: the body of `mod name { … }` (one module
/// deeper) or of `macro_rules! name { … }` (read as if at the top of the file).
#[derive(Default)]
struct Marks {
    inner_module: BTreeSet<usize>,
    macro_body: BTreeSet<usize>,
}

impl Scan<'_> {
    fn refuse(&mut self, line: usize, message: String) {
        if self.refused.as_ref().is_none_or(|r| line < r.line) {
            self.refused = Some(Refusal { line, message });
        }
    }

    /// Scans a token stream; inside an attribute's brackets every name is read as an attribute's (so that
    /// `#[cfg_attr(all(), export_name = "…")]` is refused as `#[export_name]` is).
    fn stream(&mut self, stream: TokenStream, inside: Inside) {
        let tokens = Tokens(stream.into_iter().collect());
        let mut marks = Marks::default();
        for (i, token) in tokens.0.iter().enumerate() {
            match token {
                TokenTree::Group(g) => self.group(&tokens, i, g, inside, &marks),
                TokenTree::Ident(id) => self.ident(&tokens, i, id, inside, &mut marks),
                TokenTree::Punct(p) => self.punct(&tokens, i, p, inside),
                TokenTree::Literal(_) => {}
            }
        }
    }

    /// A bracketed group: scanned in turn, knowing whether it opens an attribute, an inline module or a
    /// macro's tokens.
    fn group(&mut self, tokens: &Tokens, i: usize, g: &proc_macro2::Group, inside: Inside, marks: &Marks) {
        // `pub(crate)`, `pub(self)`, `pub(super)`: a visibility, naming nothing to call. Only those exact
        // groups are passed over: after `pub` inside a macro's input, a group can hold anything
        // (`m!(pub (anatomy_checks::…))`), and it is read like the rest.
        let visibility = {
            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
            matches!(inner.as_slice(), [TokenTree::Ident(v)] if ["crate", "self", "super"].contains(&v.to_string().as_str()))
        };
        if g.delimiter() == Delimiter::Parenthesis
            && tokens.ident_at(i.wrapping_sub(1)).as_deref() == Some("pub")
            && visibility
        {
            return;
        }
        // An attribute: `#[…]` or `#![…]`.
        let opens_attribute = g.delimiter() == Delimiter::Bracket
            && (tokens.punct_at(i.wrapping_sub(1), '#')
                || (tokens.punct_at(i.wrapping_sub(1), '!') && tokens.punct_at(i.wrapping_sub(2), '#')));
        let depth =
            if marks.macro_body.contains(&i) { 0 } else { inside.depth + usize::from(marks.inner_module.contains(&i)) };
        // A macro's input (`name!(…)`) or a macro_rules body.
        let macro_tokens =
            inside.macro_tokens || marks.macro_body.contains(&i) || tokens.punct_at(i.wrapping_sub(1), '!');
        self.stream(g.stream(), Inside { depth, attribute: inside.attribute || opens_attribute, macro_tokens });
    }

    /// A name: an attribute's, a keyword that reaches outside the file, an item no exercise may name, or
    /// a forbidden step — unless it is the student's own.
    fn ident(&mut self, tokens: &Tokens, i: usize, id: &proc_macro2::Ident, inside: Inside, marks: &mut Marks) {
        let name = id.to_string();
        if inside.attribute {
            self.attribute(id);
        } else if LINKER.contains(&name.trim_start_matches("r#")) {
            // Outside brackets too: a macro's input (`a!(no_mangle)`) can be made an attribute.
            self.attribute(id);
        }
        self.keyword(tokens, i, id, inside.depth, marks);
        self.named_item(tokens, i, id, marks);
        // A plain use of a name the file defines can only mean the file's own: no `.` or `::` before it (a
        // method, another path's item), not in a `use` item, not where a macro decides what it means, and
        // no glob import that could bring another of that name.
        let after_dot = tokens.punct_at(i.wrapping_sub(1), '.') && !tokens.punct_at(i.wrapping_sub(2), '.');
        let after_path = tokens.punct_at(i.wrapping_sub(1), ':');
        let own_plain_use = !after_dot
            && !after_path
            && !inside.macro_tokens
            && !self.imports.foreign_glob
            && !self.imports.in_use_items.contains(&place(id))
            && self.imports.own.contains(name.trim_start_matches("r#"));
        if self.imports.defined.contains(&place(id)) || own_plain_use {
            return;
        }
        if let Some(f) = self.forbidden.iter().find(|f| f.reaches(&name)) {
            self.refuse(
                id.span().start().line,
                format!(
                    "uses `{name}`, {} — this exercise asks you to write that step yourself with tensor operations \
                     (the task at the top of the stub says which)",
                    f.what
                ),
            );
        }
    }

    /// Keywords by their exact spelling (`r#mod` is an identifier, not `mod`): the ones that reach outside
    /// the file.
    fn keyword(&mut self, tokens: &Tokens, i: usize, id: &proc_macro2::Ident, depth: usize, marks: &mut Marks) {
        let line = id.span().start().line;
        match id.to_string().as_str() {
            // Only `mod name { … }`: `mod name;` loads another file, and so does any other shape once a macro
            // completes it (`mod $n;`, or `mod f001` handed to a macro that adds the `;`).
            "mod" => match (tokens.0.get(i + 1), tokens.0.get(i + 2)) {
                (Some(TokenTree::Ident(_)), Some(TokenTree::Group(g))) if g.delimiter() == Delimiter::Brace => {
                    marks.inner_module.insert(i + 2);
                }
                _ => self.refuse(
                    line,
                    "declares a module other than `mod name { … }` (`mod … ;` is a module in another file): an \
                     exercise is one file (write the module inline, or not at all)"
                        .into(),
                ),
            },
            "unsafe" => self.refuse(line, "uses `unsafe`, which no exercise needs: remove it".into()),
            "extern" => self.refuse(
                line,
                "uses `extern` (another crate or foreign functions): an exercise file uses `tch`, `std` and what \
                 its stub imports"
                    .into(),
            ),
            "crate" => self.refuse(
                line,
                "reaches outside its own file with `crate`: an exercise file uses only what it defines, `tch`, \
                 `std` and what its stub imports"
                    .into(),
            ),
            "super" => {
                // `super::super::…`: how many levels up, counted from this one.
                let mut up = 1;
                while tokens.punct_at(i + 3 * up - 2, ':') && tokens.ident_at(i + 3 * up).as_deref() == Some("super") {
                    up += 1;
                }
                let previous_is_super = tokens.punct_at(i.wrapping_sub(1), ':')
                    && tokens.ident_at(i.wrapping_sub(3)).as_deref() == Some("super");
                if !previous_is_super && up > depth {
                    self.refuse(
                        line,
                        "reaches outside its own file with `super`: an exercise file uses only what it defines, \
                         `tch`, `std` and what its stub imports"
                            .into(),
                    );
                }
            }
            _ => {}
        }
    }

    /// Names by the item they name (`r#include` is `include`): the grader's crates, the learner's crate
    /// where the stub does not allow it, files read at compile time, assembly and TorchScript.
    fn named_item(&mut self, tokens: &Tokens, i: usize, id: &proc_macro2::Ident, marks: &mut Marks) {
        let (name, line) = (id.to_string(), id.span().start().line);
        match name.trim_start_matches("r#") {
            // A macro's body is expanded where the macro is called, and so is its `super`: read it as if at
            // the top of the file, however deep the macro is defined.
            "macro_rules" if tokens.punct_at(i + 1, '!') => {
                if let Some(TokenTree::Group(_)) = tokens.0.get(i + 3) {
                    marks.macro_body.insert(i + 3);
                }
            }
            // The probe links the checks (and so the exercise list): their tape and probe write the frames
            // the grader reads, so no file may name them, nor the grader's own crate.
            grader @ ("anatomy_class" | "anatomy_checks" | "anatomy_course" | "anatomy_intake" | "anatomy_grade"
            | "anatomy_report" | "anatomy_gradebook" | "anatomy_platforms") => {
                self.refuse(line, format!("names the grader's crate `{grader}`, which an exercise file may not use"))
            }
            "transformer_anatomy" if !self.imports.allowed.contains(&place(id)) => {
                let message = format!("uses the learner's crate `transformer_anatomy` here, {}", allowance(self.uses));
                self.refuse(line, message)
            }
            // By name, wherever it is written: a rename (`use std::include as inc`) or a macro's input
            // (`m!(include)`) calls it under another name or later.
            "include" | "include_str" | "include_bytes" => self.refuse(
                line,
                format!("names `{name}`, which reads another file at compile time: an exercise file is read alone"),
            ),
            "asm" | "global_asm" | "naked_asm" => {
                self.refuse(line, format!("names `{name}`, inline assembly, which no exercise needs"))
            }
            "jit" | "CModule" | "TrainableCModule" | "IValue" => self.refuse(
                line,
                format!(
                    "uses TorchScript (`{name}`), which runs code the grader cannot read: write the exercise with \
                     tensor operations"
                ),
            ),
            _ => {}
        }
    }

    /// `#` and `$` where a macro would complete an attribute out of tokens the rules never read as one.
    fn punct(&mut self, tokens: &Tokens, i: usize, p: &proc_macro2::Punct, inside: Inside) {
        let bracket_at =
            |i: usize| matches!(tokens.0.get(i), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket);
        // `#[$x]`: an attribute whose name a macro's input supplies, which the rules cannot read.
        if inside.attribute && p.as_char() == '$' {
            self.refuse(
                p.span().start().line,
                "builds an attribute from a macro's input (`#[$…]`), which the grader cannot read: write the \
                 attribute out, or leave it"
                    .into(),
            );
        }
        // `#` starts an attribute only before `[…]` or `![…]`; anywhere else (`# $t` in a macro's body, handed
        // `[no_mangle]`) a macro completes it out of tokens the rules never read as one.
        if p.as_char() == '#' && !bracket_at(i + 1) && !(tokens.punct_at(i + 1, '!') && bracket_at(i + 2)) {
            self.refuse(
                p.span().start().line,
                "writes `#` without its attribute's brackets (a macro would complete it), which the grader cannot \
                 read: write the attribute out, or leave it"
                    .into(),
            )
        }
    }

    /// Attributes that point outside the file or at the linker: any name inside an attribute's brackets,
    /// not only its first (`cfg_attr` applies the ones after its condition).
    fn attribute(&mut self, name: &proc_macro2::Ident) {
        let line = name.span().start().line;
        match name.to_string().trim_start_matches("r#") {
            "path" => self.refuse(
                line,
                "uses `#[path]`, which makes another file part of this one: an exercise file is read alone".into(),
            ),
            "link" | "used" => {
                self.refuse(line, format!("uses `#[{name}]`, which changes what the linker sees: no exercise needs it"))
            }
            name if LINKER.contains(&name) => {
                self.refuse(line, format!("uses `#[{name}]`, which changes what the linker sees: no exercise needs it"))
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUPPORT: &[&str] = &["exercises::support::Projections"];

    fn refused(text: &str, uses: &[&str], forbidden: &[&Forbidden]) -> String {
        match check(text, uses, forbidden) {
            Verdict::Refused(r) => format!("{}: {}", r.line, r.message),
            other => panic!("not refused: {other:?}\n{text}"),
        }
    }

    #[test]
    fn tensor_operations_and_the_stubs_imports_pass() {
        let text = "use tch::{Kind, Tensor};\npub use transformer_anatomy::exercises::support::Projections;\n\
                    pub fn f(q: &Tensor, p: &Projections) -> Tensor { q.softmax(-1, Kind::Float) }\n\
                    #[cfg(test)] mod tests { use super::*; pub(crate) fn g() {} }\n";
        assert_eq!(check(text, SUPPORT, &[&ATTENTION]), Verdict::Allowed);
        // The exercise's own function may carry the forbidden name; a variable named after a layer may not
        // be mistaken for a call either when the family is another exercise's.
        let own = "use tch::Tensor;\npub fn layer_norm(x: &Tensor) -> Tensor { x.shallow_clone() }\n";
        assert_eq!(check(own, &[], &[&NORMS]), Verdict::Allowed);
        let param = "pub fn embeddings(layer_norm: &tch::nn::LayerNorm) {}\n";
        assert_eq!(check(param, &[], &[]), Verdict::Allowed);
        // Only a real definition: the same name after `fn` inside a macro's input is a use the macro may
        // turn into a call, and a method of an impl or a trait is a definition.
        let hidden = "macro_rules! c { (fn $f:ident, $x:expr) => { $x.$f([4], None::<&tch::Tensor>, \
                      None::<&tch::Tensor>, 1e-5, false) } }\nfn f(x: &tch::Tensor) { c!(fn layer_norm, x); }";
        assert!(refused(hidden, &[], &[&NORMS]).contains("uses `layer_norm`"));
        let methods = "struct N;\nimpl N { fn layer_norm(&self) {} }\ntrait T { fn group_norm(&self); }\n";
        assert_eq!(check(methods, &[], &[&NORMS]), Verdict::Allowed);
    }

    #[test]
    fn finished_operations_are_refused_however_they_are_named() {
        let cases = [
            "fn f(x: &tch::Tensor) { x.layer_norm([4], None::<&tch::Tensor>, None::<&tch::Tensor>, 1e-5, false); }",
            "use tch::Tensor as T;\nfn f(x: &T) { let g = T::f_layer_norm; }",
            "use tch::nn::layer_norm as ln;\nfn f() {}",
            "fn f() { let c = tch::nn::LayerNormConfig::default(); }",
            "macro_rules! m { ($x:expr) => { $x.native_layer_norm() } }\nfn f() {}",
            "fn f(x: &tch::Tensor) { x.r#group_norm(1); }",
        ];
        for text in cases {
            assert!(refused(text, &[], &[&NORMS]).contains("libtorch's finished normalisation"), "{text}");
        }
        let sdpa = "fn f(q: &tch::Tensor) {\n    let o = tch::Tensor::scaled_dot_product_attention(q, q, q);\n}";
        assert!(refused(sdpa, &[], &[&ATTENTION]).starts_with("2: uses `scaled_dot_product_attention`"));
        let pointer = "fn f() { let g: fn() = tch::Tensor::internal_scaled_dot_product_flash_attention_for_cpu; }";
        assert!(refused(pointer, &[], &[&ATTENTION]).contains("finished attention"));
        let loss =
            "fn f(x: &tch::Tensor) { x.cross_entropy_loss::<tch::Tensor>(x, None, tch::Reduction::Mean, -1, 0.1); }";
        assert!(refused(loss, &[], &[&CROSS_ENTROPY]).contains("cross-entropy"));
    }

    #[test]
    fn a_name_the_file_defines_is_its_own_and_a_name_is_refused_for_what_it_reaches() {
        // Helpers of the student's own, whatever words their names hold: free functions, a method called on a
        // value of the file's own type, an associated function, a closure bound to a name, fields.
        for text in [
            "fn layer_norm_statistics(x: &tch::Tensor) -> tch::Tensor { x.mean_dim(-1, true, tch::Kind::Float) }\n\
             pub fn layer_norm(x: &tch::Tensor) -> tch::Tensor { layer_norm_statistics(x) }",
            "fn multi_head_attention(x: &tch::Tensor) -> tch::Tensor { x.shallow_clone() }\n\
             pub fn gpt_block(x: &tch::Tensor) -> tch::Tensor { multi_head_attention(x) }",
            "struct Stats { layer_norm_eps_value: f64 }\nimpl Stats { fn apply_layer_norm_scale(&self) -> f64 { self.layer_norm_eps_value } }\n\
             fn f(s: &Stats) -> f64 { s.apply_layer_norm_scale() }",
            "struct LayerNormParts;\nimpl LayerNormParts { fn new() -> Self { LayerNormParts } }\nfn f() { let _ = LayerNormParts::new(); }",
            "fn f(x: &tch::Tensor) { let layer_norm = |y: &tch::Tensor| y.shallow_clone(); let _ = layer_norm(x); }",
            // A recursive call of the exercise's own function, by its name.
            "pub fn layer_norm(x: &tch::Tensor, n: i64) -> tch::Tensor { if n == 0 { x.shallow_clone() } else { layer_norm(x, n - 1) } }",
        ] {
            assert_eq!(check(text, &[], &[&NORMS, &ATTENTION]), Verdict::Allowed, "{text}");
        }
        // What the name reaches decides, not what the file defines: a method (`.`) or another path's item
        // (`::`) of a name tch has is tch's, a glob import could bring tch's over the file's, a `use` names
        // tch's, and a macro decides what it means where it expands.
        for text in [
            "fn layer_norm() {}\nfn f(x: &tch::Tensor) { x.layer_norm([4], None::<&tch::Tensor>, None::<&tch::Tensor>, 1e-5, false); }",
            "fn native_layer_norm() {}\nfn f() { let g = tch::Tensor::native_layer_norm; }",
            "use tch::nn::*;\nfn group_norm() {}\nmod m { use tch::nn::*; fn f() { let _ = group_norm; } }",
            "fn layer_norm() {}\nmod m { use tch::nn::{layer_norm}; }",
            "fn layer_norm() {}\nmacro_rules! m { () => { layer_norm } }\nfn f() { let _ = m!(); }",
            // A reviewer's two bypasses: a glob through an imported module (`super::nn` is tch's), and a
            // glob that a macro brings where it expands; syn reads neither as the rules did.
            "use tch::nn;\npub fn layer_norm() {}\nmod inner { use super::nn::*; fn f() { let _ = layer_norm; } }",
            "macro_rules! bring { () => { use tch::nn::*; } }\npub fn layer_norm() {}\nmod inner { bring!(); fn f() { let _ = layer_norm; } }",
        ] {
            assert!(refused(text, &[], &[&NORMS]).contains("libtorch's finished normalisation"), "{text}");
        }
    }

    #[test]
    fn raw_identifiers_and_a_scripts_first_line_are_read_as_rustc_reads_them() {
        let raw = "fn f(x: i64) -> i64 { let r#mod = x; let r#unsafe = r#mod + 1; let r#extern = r#unsafe; r#extern }";
        assert_eq!(check(raw, &[], &[]), Verdict::Allowed);
        // A raw identifier still names the item it spells.
        assert!(refused("fn f() { r#include!(\"x.rs\"); }", &[], &[]).contains("reads another file"));
        assert!(refused("fn f(x: &tch::Tensor) { x.r#layer_norm(); }", &[], &[&NORMS]).contains("normalisation"));
        let script = "#!/usr/bin/env run-cargo-script\nfn f() {}\nfn g() { let x = unsafe { 1 }; }\n";
        assert_eq!(refused(script, &[], &[]), "3: uses `unsafe`, which no exercise needs: remove it");
        assert_eq!(check("#!/usr/bin/env run\npub fn f() {}\n", &[], &[]), Verdict::Allowed);
        // `#![…]` is an inner attribute, not a script's line, and so is `#!` with a comment before its
        // `[` (a reviewer's bypass: the whole line was blanked, and rustc compiled the code on it).
        assert!(refused("#![path = \"x\"]\nfn f() {}", &[], &[]).contains("`#[path]`"));
        for hidden in [
            "#!/* c */[allow(unused)] fn f(x: &tch::Tensor) { x.layer_norm(); }",
            "#! /* c */ [allow(unused)] fn f(x: &tch::Tensor) { x.layer_norm(); }",
            "#!//c\n[allow(unused)] fn f(x: &tch::Tensor) { x.layer_norm(); }",
            "#!/bin/x [\nfn f(x: &tch::Tensor) { x.layer_norm(); }",
        ] {
            assert!(!matches!(check(hidden, &[], &[&NORMS]), Verdict::Allowed), "{hidden}");
        }
    }

    #[test]
    fn the_learners_crate_only_through_what_the_stub_imports() {
        for text in [
            "use transformer_anatomy::scaled_dot_product::scaled_dot_product_attention;\nfn f() {}",
            "use transformer_anatomy::*;\nfn f() {}",
            "use transformer_anatomy::exercises::support::*;\nfn f() {}",
            "use transformer_anatomy as ta;\nfn f() {}",
            "use transformer_anatomy::{exercises::support::Projections, Attention};\nfn f() {}",
        ] {
            assert!(
                refused(text, SUPPORT, &[])
                    .contains("may use only `transformer_anatomy::exercises::support::Projections`"),
                "{text}"
            );
        }
        for text in [
            "pub use transformer_anatomy::exercises::support::Projections;\nfn f() { transformer_anatomy::causal_mask(3); }",
            "macro_rules! m { ($c:ident) => { $c::attention::Attention } }\nfn f() { let _ = m!(transformer_anatomy); }",
            "extern crate transformer_anatomy as other;\nfn f() {}",
        ] {
            let r = refused(text, SUPPORT, &[]);
            assert!(r.contains("transformer_anatomy") || r.contains("extern"), "{text}: {r}");
        }
        assert!(refused("fn f() { anatomy_class::grade_student(); }", &[], &[]).contains("grader's crate"));
        assert!(refused("fn f() { anatomy_checks::tape::record(|| 1); }", &[], &[]).contains("`anatomy_checks`"));
        assert!(refused("use anatomy_gradebook::Gradebook;", &[], &[]).contains("`anatomy_gradebook`"));
        // A group after `pub` inside a macro's input is no visibility: what it holds is read.
        let hidden = "macro_rules! m { (pub $e:expr) => { $e } }\nfn f() { let _ = m!(pub (anatomy_checks::tape::record(|| 1))); }";
        assert!(refused(hidden, &[], &[]).contains("`anatomy_checks`"), "{}", refused(hidden, &[], &[]));
        assert!(matches!(check("pub(crate) fn f() {}\npub(self) fn g() {}", &[], &[]), Verdict::Allowed));
        assert!(refused("fn f() { r#anatomy_course::EXERCISES; }", &[], &[]).contains("`anatomy_course`"));
        assert!(refused("fn f() { anatomy_grade::sandbox::Tier::None; }", &[], &[]).contains("`anatomy_grade`"));
        let renamed = "pub use transformer_anatomy::exercises::support::Projections as P;\nfn f(p: &P) {}";
        assert_eq!(check(renamed, SUPPORT, &[]), Verdict::Allowed);
    }

    #[test]
    fn reading_beyond_the_file_and_escaping_rusts_checks_are_refused() {
        let cases = [
            ("const S: &str = include_str!(\"/etc/passwd\");", "reads another file"),
            ("#[path = \"/tmp/x.rs\"]\nmod other;", "`#[path]`"),
            ("mod other;", "`mod … ;`"),
            ("fn f() { crate::f001::g(); }", "with `crate`"),
            ("fn f() { super::f001::g(); }", "with `super`"),
            ("mod m { fn f() { super::super::g(); } }", "with `super`"),
            ("fn f() { let x = unsafe { 1 }; }", "`unsafe`"),
            ("extern \"C\" { fn atg_relu(); }", "`extern`"),
            ("#[no_mangle]\nfn free() {}", "`#[no_mangle]`"),
            // Every name inside the brackets, not only the first: `cfg_attr` applies those after its condition.
            ("#[cfg_attr(all(), export_name = \"free\")]\nfn f() {}", "`#[export_name]`"),
            (
                "#[cfg_attr(all(), cfg_attr(all(), link_section = \".init_array\"))]\nstatic S: u8 = 0;",
                "`#[link_section]`",
            ),
            ("#[cfg_attr(all(), path = \"/tmp\")]\nmod other {}", "`#[path]`"),
            ("std::arch::global_asm!(\"nop\");", "inline assembly"),
            // Renamed, or handed to a macro: a reviewer's bypasses, each of which passed before.
            ("mod o { use std::include as inc; inc!(\"f001.rs\"); }", "reads another file"),
            ("macro_rules! m { ($i:ident) => { $i!(\"f001.rs\"); } }\nm!(include);", "reads another file"),
            ("use std::arch::global_asm as g;\ng!(\"nop\");", "inline assembly"),
            ("macro_rules! l { ($n:ident) => { mod $n; } }\nl!(f001);", "`mod … ;`"),
            ("macro_rules! l { ($a:tt $b:tt) => { $a $b; } }\nl!(mod f001);", "`mod … ;`"),
            ("macro_rules! a { ($x:ident) => { #[$x] pub fn free() {} } }\na!(no_mangle);", "`#[$…]`"),
            ("m!(no_mangle);", "`#[no_mangle]`"),
            (
                "macro_rules! a { ($t:tt) => { # $t pub fn free() {} } }\na!([inline]);",
                "without its attribute's brackets",
            ),
            (
                "macro_rules! a { ($t:tt $h:tt) => { $h $t pub fn free() {} } }\na!([inline] #);",
                "without its attribute's brackets",
            ),
            (
                "#[macro_use]\nmod a { macro_rules! up { () => { super::f001::ln } } }\nfn f() { up!()(); }",
                "with `super`",
            ),
            ("fn f() { tch::CModule::load(\"m.pt\"); }", "TorchScript"),
            ("macro_rules! m { () => { $crate::f001::g() } }", "with `crate`"),
        ];
        for (text, words) in cases {
            let r = refused(text, &[], &[]);
            assert!(r.contains(words), "{text}: {r}");
        }
        assert_eq!(check("mod m { fn f() { super::g(); } }\nfn g() {}", &[], &[]), Verdict::Allowed);
        assert_eq!(
            check("macro_rules! twice { ($e:expr) => { $e + $e } }\nfn f() -> i64 { twice!(1) }", &[], &[]),
            Verdict::Allowed
        );
    }

    #[test]
    fn a_file_the_parser_cannot_read_is_said_to_be_unreadable() {
        assert!(matches!(check("fn f( {", &[], &[]), Verdict::Unreadable(_)));
        assert!(matches!(check("fn f() { let x = ; }", &[], &[]), Verdict::Unreadable(Refusal { line: 1, .. })));
    }
}
