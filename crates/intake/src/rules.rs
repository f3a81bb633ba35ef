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
//!   file that could bring another), or where a path reaches it through the file's own modules
//!   (`heads::scaled_dot_product_attention` in a `use` or an expression, `self::…`, `super::…`, where
//!   `mod heads { … }` defines it): every name before the last a module the file writes where the path
//!   starts (not in a function's body), no other thing of that name anywhere in the file that could hide
//!   it (an import's name, a block's item, a generic parameter, a name a macro is handed), no crate's name,
//!   no glob from outside the file, and the last an item that module itself defines — a module of the
//!   file's own named like tch's (`mod nn { … }`) lends nothing of tch's. A helper named
//!   `layer_norm_moments` reaches nothing of LibTorch's;
//! - **anything that reads beyond the file or escapes Rust's checks**, in every exercise: `unsafe`,
//!   `extern` (crates and foreign functions), `include!`/`include_str!`/`include_bytes!` (by name, renamed
//!   or handed to a macro too), `#[path]` and any module but `mod name { … }`, `crate::` and `super::` above
//!   the file (a macro's `super` counted from the top of the file, where it expands), an attribute a
//!   macro's input names (`#[$x]`) or a `#` without its brackets, linker attributes (`#[no_mangle]`, …: their
//!   names anywhere in the file), inline assembly, and TorchScript (`CModule`), which runs code no parser
//!   here reads;
//! - **any attribute not on the list of those an exercise file needs** ([`ATTRIBUTES`]: lint levels, `doc`,
//!   `inline`, `derive` of the standard library's traits, `cfg`, unit tests' …), by its path, and so every
//!   attribute a `cfg_attr` applies: one that makes the compiler read a file (`#[debugger_visualizer]`,
//!   `#[path]`) is refused with those words, and so is one no one thought of.
//!
//! The rules look at identifiers, which stable Rust has no way to assemble from pieces (a macro can paste
//! tokens it was given, never make a new name out of strings), so a name the rules forbid cannot appear
//! without being spelled. A raw identifier (`r#mod`) is an identifier, never the keyword it spells; a `#!`
//! first line (a script's, which rustc skips) is skipped too. The sandbox still stands behind them: a file
//! that passes the rules is compiled and run exactly as before.
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use syn::visit::Visit;

use crate::bounds;

use anatomy_course::forbidden::Forbidden;

/// Attributes that change what the linker sees, refused by name anywhere in a file (`link` and `used`, words
/// a student may well use, only as an attribute, where the allow-list refuses them).
const LINKER: [&str; 6] = ["no_mangle", "export_name", "link_section", "link_name", "link_ordinal", "naked"];

/// The attributes an exercise file may use, by their path: an allow-list of what honest files write, so
/// that an attribute no one listed (one that reads a file, talks to the linker, changes the crate) is
/// refused by its name rather than let through because no one thought of it. Each entry, and why:
///
/// - `allow`, `warn`, `deny`, `forbid`, `expect`: lint levels; what is inside is lint names, not attributes;
/// - `doc`: doc comments are `#[doc = "…"]` to the parser (a value built with `include_str!` is refused
///   by that name);
/// - `inline`, `cold`, `track_caller`, `must_use`: hints to the compiler and its warnings about the
///   file's own functions;
/// - `derive`: only the standard library's derives ([`DERIVES`]), which write nothing but the trait;
/// - `cfg`, `cfg_attr`: conditions; each attribute `cfg_attr` applies is read against this list too;
/// - `test`, `ignore`, `should_panic`: a module of unit tests (`#[cfg(test)] mod tests { … }`);
/// - `non_exhaustive`: a promise about the file's own types, read by no one but the compiler;
/// - `macro_export`, `macro_use`: where the file's own `macro_rules!` helpers can be called (`#[macro_use]
///   extern crate` is refused as `extern`);
/// - `rustfmt::skip`: a note to the formatter, which rustc does not read.
const ATTRIBUTES: [&str; 19] = [
    "allow",
    "warn",
    "deny",
    "forbid",
    "expect",
    "doc",
    "inline",
    "cold",
    "track_caller",
    "must_use",
    "derive",
    "cfg",
    "cfg_attr",
    "test",
    "ignore",
    "should_panic",
    "non_exhaustive",
    "macro_export",
    "macro_use",
];

/// The derives an exercise file may use: the standard library's.
const DERIVES: [&str; 9] = ["Debug", "Clone", "Copy", "PartialEq", "Eq", "PartialOrd", "Ord", "Hash", "Default"];

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
    let mut imports = Imports { uses, modules: vec![Module::default()], scope: Some(0), ..Imports::default() };
    imports.visit_file(&file);
    if let Some(r) = imports.refused.take() {
        return Verdict::Refused(r);
    }
    imports.finish();
    let mut scan = Scan { imports: &imports, forbidden, uses, refused: None };
    scan.stream(tokens, Inside { module: Some(0), ..Inside::default() });
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

/// A name a `use` item imports: the module it is written in, its path, the places of its last name and of
/// its new name, and the name it binds.
type UseLeaf = (Option<usize>, Vec<String>, Vec<Place>, Option<String>);

/// What the parser sees and the token scan cannot: the `use transformer_anatomy::…` items that import only
/// what the stub hands over (the places of their `transformer_anatomy`, which the scan then lets pass), the
/// names the file defines (the places of a signature's, an item's or a binding's name, and the names
/// themselves), every name written inside a `use` item, whether a glob import could bring names from
/// outside the file, and the file's own modules with what each defines, for the paths through them
/// ([`Imports::own_path`]). syn does not look into a macro's input, so `m!(fn layer_norm, x)` defines
/// nothing and is read as a use.
#[derive(Default)]
struct Imports<'a> {
    uses: &'a [&'a str],
    allowed: BTreeSet<Place>,
    defined: BTreeSet<Place>,
    own: BTreeSet<String>,
    in_use_items: BTreeSet<Place>,
    foreign_glob: bool,
    refused: Option<Refusal>,
    /// The file (`[0]`) and its modules that a path can name: each `mod name { … }` written directly in
    /// the file or in another of them, never inside a function's body or any other block.
    modules: Vec<Module>,
    /// Those modules by the place of their name.
    module_at: BTreeMap<Place, usize>,
    /// While walking: the module whose items are being read (none inside a module that is not one of
    /// those), and whether inside a block (whose items and imports hide the module's from the names in it).
    scope: Option<usize>,
    in_block: bool,
    /// Names that may mean something other than one of those modules where a path starts with them: every
    /// name a `use` binds, a generic parameter, an item of a block or of a module not among them, and every
    /// name a macro is handed or writes (but the standard library's macros of expressions, [`PLAIN_MACROS`]).
    hiding: BTreeSet<String>,
    /// Macros called, by name, with the names in their tokens: which hide is known once the walk is done.
    called: Vec<(String, Vec<String>)>,
    /// The names of the file's own `macro_rules!`, and whether a macro's tokens hold one (whose name may be
    /// one the macro is handed).
    macro_names: BTreeSet<String>,
    macro_in_macro: bool,
    /// Every name a `use` item imports (not a glob): the module it is written in, its path, the places of
    /// its last name and of its new name, and the name it binds; those that reach the file's own item become
    /// [`Imports::own_paths`] once the walk is done, and the name they bind the file's own.
    use_leaves: Vec<UseLeaf>,
    own_paths: BTreeSet<Place>,
    /// A glob import in a block (`fn f() { use super::*; … }`): it hides the module's names from the
    /// block's paths with names the parser cannot tell, so no path counts as the file's own.
    glob_in_block: bool,
}

/// One of the file's modules that a path can name: the module it is written in, its modules by name
/// (`None` for a name two modules share, as `#[cfg]` allows), the names of the items it defines.
#[derive(Default)]
struct Module {
    parent: Option<usize>,
    modules: BTreeMap<String, Option<usize>>,
    items: BTreeSet<String>,
}

/// The standard library's macros that compute a value and bind no name where they are called: a name in
/// their tokens (`assert_eq!(heads::split(x).size(), …)`) is a use, never a definition, unless the file
/// defines or imports a macro of that name itself.
const PLAIN_MACROS: [&str; 23] = [
    "assert",
    "assert_eq",
    "assert_ne",
    "concat",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "dbg",
    "eprint",
    "eprintln",
    "format",
    "format_args",
    "matches",
    "panic",
    "print",
    "println",
    "stringify",
    "todo",
    "unimplemented",
    "unreachable",
    "vec",
    "write",
    "writeln",
];

/// The most names of a path read back from its last (a solution's longest has 4), so that a chain of
/// thousands costs no more than its length times this to read.
const MAX_PATH: usize = 32;

/// Crates a path can start with, which a module of the file's own is never taken for.
const CRATES: [&str; 4] = ["tch", "std", "core", "alloc"];

/// A name as the rules compare it: without `r#`.
fn bare(ident: &proc_macro2::Ident) -> String {
    ident.to_string().trim_start_matches("r#").to_string()
}

impl Imports<'_> {
    fn define(&mut self, ident: &proc_macro2::Ident) {
        self.defined.insert(place(ident));
        self.own.insert(bare(ident));
    }

    /// An item's name: one its module defines, or, in a block or a module no path names, one that hides.
    fn item(&mut self, ident: &proc_macro2::Ident) {
        match self.scope {
            Some(m) if !self.in_block => self.modules[m].items.insert(bare(ident)),
            _ => self.hiding.insert(bare(ident)),
        };
    }

    /// Once the walk is done: the names macros are handed hide unless the macro is a plain one of the
    /// standard library's, and the imports that reach the file's own items are known.
    fn finish(&mut self) {
        let hidden = self.hiding.clone();
        for (name, names) in std::mem::take(&mut self.called) {
            let redefined = self.macro_in_macro || self.macro_names.contains(&name) || hidden.contains(&name);
            if !PLAIN_MACROS.contains(&name.as_str()) || redefined {
                self.hiding.extend(names);
            }
        }
        let leaves = std::mem::take(&mut self.use_leaves);
        for (scope, path, at, binds) in leaves {
            if self.own_path(scope, &path) {
                self.own_paths.extend(at);
                self.own.extend(binds);
            }
        }
    }

    /// Whether `path`, written in module `scope`, names an item the file defines: every name before the
    /// last is `self`, `super` or one of the file's modules (each found in the one before it, and the first
    /// in `scope`, where nothing else of its name can hide it), and the last is an item the module reached
    /// defines. A glob import from outside the file could bring another item of that name: then no path is.
    fn own_path(&self, scope: Option<usize>, path: &[String]) -> bool {
        let (Some(mut module), Some((last, before))) = (scope, path.split_last()) else { return false };
        if self.foreign_glob || self.glob_in_block || before.is_empty() {
            return false;
        }
        for (k, segment) in before.iter().enumerate() {
            let next = match segment.as_str() {
                "self" if k == 0 => Some(module),
                "super" if before[..k].iter().all(|s| s == "super") => self.modules[module].parent,
                name if self.hiding.contains(name) || CRATES.contains(&name) => None,
                name => self.modules[module].modules.get(name).copied().flatten(),
            };
            match next {
                Some(m) => module = m,
                None => return false,
            }
        }
        self.modules[module].items.contains(last)
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
        if leaves.iter().any(|l| l.glob && !l.path.iter().all(|s| s == "self" || s == "super")) {
            self.foreign_glob = true;
        }
        // What each name imported is bound to where the `use` is written hides a module of that name there,
        // and whether it is the file's own item is known once the walk is done.
        for leaf in &leaves {
            self.hiding.extend(leaf.binds.clone());
            self.glob_in_block |= leaf.glob && (self.in_block || self.scope.is_none());
            if !leaf.at.is_empty() {
                let path = leaf.path.iter().map(|s| s.trim_start_matches("r#").to_string()).collect();
                self.use_leaves.push((self.scope, path, leaf.at.clone(), leaf.binds.clone()));
            }
        }
        let ours: Vec<&Leaf> =
            leaves.iter().filter(|l| l.path.first().is_some_and(|s| s == "transformer_anatomy")).collect();
        if ours.is_empty() {
            return;
        }
        for leaf in &ours {
            let below = leaf.path[1..].join("::");
            if leaf.glob || !self.uses.contains(&below.as_str()) {
                let shown = if leaf.glob { format!("{}::*", leaf.path.join("::")) } else { leaf.path.join("::") };
                self.refused.get_or_insert(Refusal {
                    line: leaf.line,
                    message: format!("imports `{shown}`, {}", allowance(self.uses)),
                });
                return;
            }
        }
        self.allowed.extend(roots);
    }

    /// A module written inline: one a path can name when it is written directly in another such module
    /// (not in a block), and the module its items are read in.
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let saved = (self.scope, self.in_block);
        let named = match self.scope {
            Some(parent) if !self.in_block && item.content.is_some() => {
                let id = self.modules.len();
                self.modules.push(Module { parent: Some(parent), ..Module::default() });
                let shared = self.modules[parent].modules.insert(bare(&item.ident), Some(id)).is_some();
                if shared {
                    self.modules[parent].modules.insert(bare(&item.ident), None);
                }
                self.module_at.insert(place(&item.ident), id);
                Some(id)
            }
            _ => None,
        };
        (self.scope, self.in_block) = (named, false);
        syn::visit::visit_item_mod(self, item);
        (self.scope, self.in_block) = saved;
    }

    /// A block: the items and imports in it hide the module's from the names written in it.
    fn visit_block(&mut self, block: &'ast syn::Block) {
        let saved = self.in_block;
        self.in_block = true;
        syn::visit::visit_block(self, block);
        self.in_block = saved;
    }

    fn visit_type_param(&mut self, param: &'ast syn::TypeParam) {
        self.hiding.insert(bare(&param.ident));
        syn::visit::visit_type_param(self, param);
    }

    fn visit_const_param(&mut self, param: &'ast syn::ConstParam) {
        self.hiding.insert(bare(&param.ident));
        syn::visit::visit_const_param(self, param);
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
        match item {
            syn::Item::Fn(i) => self.item(&i.sig.ident),
            syn::Item::Macro(syn::ItemMacro { ident: Some(name), .. }) => {
                self.macro_names.insert(bare(name));
            }
            syn::Item::ExternCrate(i) => {
                self.hiding.insert(bare(i.rename.as_ref().map_or(&i.ident, |(_, r)| r)));
            }
            _ => {}
        }
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
            if !matches!(item, syn::Item::Macro(_)) {
                self.item(ident);
            }
        }
        syn::visit::visit_item(self, item);
    }

    /// A macro's tokens, which syn does not parse (read in a loop, groups on a heap stack): a `use` among
    /// them (a glob a macro brings in where it expands) could bring any name, so no plain use counts as the
    /// file's own; a `macro_rules!` among them could define any macro, so none counts as the standard
    /// library's; and every name in them may be bound to anything where the macro expands.
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let mut names = Vec::new();
        let mut open = vec![mac.tokens.clone().into_iter()];
        while let Some(level) = open.last_mut() {
            match level.next() {
                None => {
                    open.pop();
                }
                Some(TokenTree::Group(g)) => open.push(g.stream().into_iter()),
                Some(TokenTree::Ident(id)) => {
                    if id == "use" {
                        self.foreign_glob = true;
                    }
                    self.macro_in_macro |= id == "macro_rules";
                    names.push(bare(&id));
                }
                Some(_) => {}
            }
        }
        let path: Vec<String> = mac.path.segments.iter().map(|s| bare(&s.ident)).collect();
        let name = match path.as_slice() {
            [name] => name.clone(),
            [krate, name] if krate == "std" || krate == "core" => name.clone(),
            _ => String::new(),
        };
        self.called.push((name, names));
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

/// One path a `use` tree imports: its segments, whether it is a glob, its line, the places of its last name
/// and of a rename's new name (none for a glob) and the name it binds where the `use` is written (a
/// rename's, `nn` for `nn::{self}`).
struct Leaf {
    path: Vec<String>,
    glob: bool,
    line: usize,
    at: Vec<Place>,
    binds: Option<String>,
}

/// Every path a `use` tree imports ([`Leaf`]); and the places of the `transformer_anatomy` segments that
/// start a path.
fn flatten(tree: &syn::UseTree, prefix: &mut Vec<String>, leaves: &mut Vec<Leaf>, roots: &mut Vec<Place>) {
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
            let binds = if n.ident == "self" { prefix.last().cloned() } else { Some(n.ident.to_string()) };
            let binds = binds.map(|b| b.trim_start_matches("r#").to_string());
            leaves.push(Leaf {
                path,
                glob: false,
                line: n.ident.span().start().line,
                at: vec![place(&n.ident)],
                binds,
            });
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            let (line, at, binds) =
                (r.ident.span().start().line, vec![place(&r.ident), place(&r.rename)], Some(bare(&r.rename)));
            leaves.push(Leaf { path, glob: false, line, at, binds });
        }
        syn::UseTree::Glob(g) => {
            let line = g.star_token.spans[0].start().line;
            leaves.push(Leaf { path: prefix.clone(), glob: true, line, at: Vec::new(), binds: None });
        }
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

/// Where in the file the scan is: how many inline modules (`mod name { … }`) deep and which of the file's
/// modules a path starts in (none where the parser found none: inside a block's module, a macro's
/// tokens), inside an attribute's brackets (where `$` would build one), inside a macro's definition or
/// input (where what a name will mean is decided where the macro expands).
#[derive(Clone, Copy, Default)]
struct Inside {
    depth: usize,
    module: Option<usize>,
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

    /// `::` at `i` (as one token pair, not `: :`).
    fn colons_at(&self, i: usize) -> bool {
        matches!(self.0.get(i), Some(TokenTree::Punct(p)) if p.as_char() == ':' && p.spacing() == proc_macro2::Spacing::Joint)
            && self.punct_at(i + 1, ':')
    }

    /// The path that ends with the name at `i` (`heads::scaled_dot_product_attention`, `self::heads::x`),
    /// read backwards in a loop; none when it goes on before what can be read here (`::x::y`, `<T>::y`,
    /// `$m::y`), is a macro's (`a::b!`) or is longer than [`MAX_PATH`] names.
    fn path_to(&self, i: usize) -> Option<Vec<String>> {
        let bare_at = |k: usize| self.ident_at(k).map(|n| n.trim_start_matches("r#").to_string());
        let mut path = vec![bare_at(i)?];
        let mut start = i;
        while start >= 3 && self.colons_at(start - 2) {
            if path.len() == MAX_PATH {
                return None;
            }
            path.push(bare_at(start - 3)?);
            start -= 3;
        }
        if self.punct_at(start.wrapping_sub(1), ':')
            || self.punct_at(start.wrapping_sub(1), '$')
            || self.punct_at(i + 1, '!')
        {
            return None;
        }
        path.reverse();
        Some(path)
    }
}

/// What a name earlier in the stream says of a group later in it: the body of `mod name { … }` (one module
/// deeper) or of `macro_rules! name { … }` (read as if at the top of the file).
#[derive(Default)]
struct Marks {
    /// The body's place in the stream, and the file's module it is (none if the parser found none there).
    inner_module: BTreeMap<usize, Option<usize>>,
    macro_body: BTreeSet<usize>,
}

impl Scan<'_> {
    fn refuse(&mut self, line: usize, message: String) {
        if self.refused.as_ref().is_none_or(|r| line < r.line) {
            self.refused = Some(Refusal { line, message });
        }
    }

    /// Scans a token stream.
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
        if opens_attribute {
            self.attributes(g);
        }
        let depth = if marks.macro_body.contains(&i) {
            0
        } else {
            inside.depth + usize::from(marks.inner_module.contains_key(&i))
        };
        // A macro's input (`name!(…)`) or a macro_rules body.
        let macro_tokens =
            inside.macro_tokens || marks.macro_body.contains(&i) || tokens.punct_at(i.wrapping_sub(1), '!');
        // The module a path starts in: the one the parser found here, inside the one the scan is in.
        let module = match marks.inner_module.get(&i) {
            _ if macro_tokens => None,
            Some(found) => {
                found.filter(|&m| inside.module.is_some() && self.imports.modules[m].parent == inside.module)
            }
            None => inside.module,
        };
        let attribute = inside.attribute || opens_attribute;
        self.stream(g.stream(), Inside { depth, module, attribute, macro_tokens });
    }

    /// A name: an attribute's, a keyword that reaches outside the file, an item no exercise may name, or
    /// a forbidden step — unless it is the student's own.
    fn ident(&mut self, tokens: &Tokens, i: usize, id: &proc_macro2::Ident, inside: Inside, marks: &mut Marks) {
        let name = id.to_string();
        if LINKER.contains(&name.trim_start_matches("r#")) {
            // Anywhere, not only as an attribute: a macro's input (`a!(no_mangle)`) can be made one.
            self.linker(id.span().start().line, name.trim_start_matches("r#"));
        }
        self.keyword(tokens, i, id, inside.depth, marks);
        self.named_item(tokens, i, id, marks);
        let Some(f) = self.forbidden.iter().find(|f| f.reaches(&name)) else { return };
        // A plain use of a name the file defines can only mean the file's own: no `.` or `::` before it (a
        // method, another path's item), not in a `use` item, not where a macro decides what it means, and
        // no glob import that could bring another of that name.
        let after_dot = tokens.punct_at(i.wrapping_sub(1), '.') && !tokens.punct_at(i.wrapping_sub(2), '.');
        let after_path = tokens.punct_at(i.wrapping_sub(1), ':');
        let in_use_item = self.imports.in_use_items.contains(&place(id));
        let own_plain_use = !after_dot
            && !after_path
            && !inside.macro_tokens
            && !self.imports.foreign_glob
            && !in_use_item
            && self.imports.own.contains(name.trim_start_matches("r#"));
        // A path through the file's own modules to an item the file defines there is the file's own too
        // (`heads::scaled_dot_product_attention`, a module's own helper), in a `use` item or not.
        let own_path = !inside.macro_tokens
            && !inside.attribute
            && (self.imports.own_paths.contains(&place(id))
                || (after_path
                    && !in_use_item
                    && tokens.path_to(i).is_some_and(|p| self.imports.own_path(inside.module, &p))));
        if self.imports.defined.contains(&place(id)) || own_plain_use || own_path {
            return;
        }
        self.refuse(
            id.span().start().line,
            format!(
                "uses `{name}`, {} — this exercise asks you to write that step yourself with tensor operations \
                 (the task at the top of the stub says which)",
                f.what
            ),
        );
    }

    /// Keywords by their exact spelling (`r#mod` is an identifier, not `mod`): the ones that reach outside
    /// the file.
    fn keyword(&mut self, tokens: &Tokens, i: usize, id: &proc_macro2::Ident, depth: usize, marks: &mut Marks) {
        let line = id.span().start().line;
        match id.to_string().as_str() {
            // Only `mod name { … }`: `mod name;` loads another file, and so does any other shape once a macro
            // completes it (`mod $n;`, or `mod f001` handed to a macro that adds the `;`).
            "mod" => match (tokens.0.get(i + 1), tokens.0.get(i + 2)) {
                (Some(TokenTree::Ident(name)), Some(TokenTree::Group(g))) if g.delimiter() == Delimiter::Brace => {
                    marks.inner_module.insert(i + 2, self.imports.module_at.get(&place(name)).copied());
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

    /// `#[name]` for an attribute that changes what the linker sees.
    fn linker(&mut self, line: usize, name: &str) {
        self.refuse(line, format!("uses `#[{name}]`, which changes what the linker sees: no exercise needs it"));
    }

    /// An attribute's brackets (`#[…]`, `#![…]`): its path against [`ATTRIBUTES`], then each attribute a
    /// `cfg_attr` in it applies (those after its condition), however deeply nested, in a loop with a list
    /// of its own. Only paths are attributes: `allow(dead_code)` holds a lint's name, `derive(Debug)` a
    /// derive's ([`DERIVES`]).
    fn attributes(&mut self, g: &proc_macro2::Group) {
        let comma = |t: &TokenTree| matches!(t, TokenTree::Punct(p) if p.as_char() == ',');
        let mut lists = vec![(g.stream(), false)];
        while let Some((list, applied)) = lists.pop() {
            let tokens: Vec<TokenTree> = list.into_iter().collect();
            let each: Vec<&[TokenTree]> =
                if applied { tokens.split(comma).skip(1).collect() } else { vec![tokens.as_slice()] };
            for attribute in each.into_iter().filter(|a| !a.is_empty()) {
                lists.extend(self.attribute(attribute));
            }
        }
    }

    /// One attribute, its path then its arguments: refused with its name unless [`ATTRIBUTES`] has it; the
    /// list a `cfg_attr` applies is given back, to be read in turn.
    fn attribute(&mut self, attribute: &[TokenTree]) -> Option<(TokenStream, bool)> {
        let line = attribute[0].span().start().line;
        let (path, rest) = path_of(attribute);
        if path.is_empty() {
            // `#[$x]` is refused where its `$` is read, with its own words.
            if !matches!(&attribute[0], TokenTree::Punct(p) if p.as_char() == '$') {
                let message = "writes an attribute that starts with no name, which the grader cannot read: write \
                               the attribute out, or leave it";
                self.refuse(line, message.into());
            }
            return None;
        }
        let arguments = match rest.first() {
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => Some(g.stream()),
            _ => None,
        };
        let name = path.join("::");
        match name.as_str() {
            "cfg_attr" => return arguments.map(|a| (a, true)),
            "derive" => self.derives(arguments.unwrap_or_default()),
            allowed if ATTRIBUTES.contains(&allowed) => {}
            _ if path[0] == "rustfmt" && path.get(1).is_some_and(|s| s == "skip") => {}
            "path" => self.refuse(
                line,
                "uses `#[path]`, which makes another file part of this one: an exercise file is read alone".into(),
            ),
            "debugger_visualizer" => self.refuse(
                line,
                "uses `#[debugger_visualizer]`, which makes the compiler read another file: an exercise file is read \
                 alone"
                    .into(),
            ),
            "link" => self.refuse(
                line,
                "uses `#[link]`, which makes the linker read another file (a library): no exercise needs it".into(),
            ),
            linker if LINKER.contains(&linker) || linker == "used" => self.linker(line, linker),
            other => self.refuse(
                line,
                format!(
                    "uses `#[{other}]`, which is not among the attributes an exercise file may use (lint levels, \
                     `doc`, `derive`, `cfg`, `inline`, `must_use`, `test`, …: exercises/README.md lists them)"
                ),
            ),
        }
        None
    }

    /// A `derive`'s list: only the standard library's derives ([`DERIVES`]), by name or by their path in
    /// `std` or `core`.
    fn derives(&mut self, list: TokenStream) {
        let tokens: Vec<TokenTree> = list.into_iter().collect();
        for derive in tokens.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ',')).filter(|d| !d.is_empty())
        {
            let (path, rest) = path_of(derive);
            let known = rest.is_empty()
                && path.last().is_some_and(|name| DERIVES.contains(&name.as_str()))
                && (path.len() == 1 || path[0] == "std" || path[0] == "core");
            if !known {
                let shown: TokenStream = derive.iter().cloned().collect();
                self.refuse(
                    derive[0].span().start().line,
                    format!(
                        "derives `{shown}`, which is not among the derives an exercise file may use (the standard \
                         library's: `Debug`, `Clone`, `Copy`, `PartialEq`, `Eq`, `PartialOrd`, `Ord`, `Hash`, `Default`)"
                    ),
                );
            }
        }
    }
}

/// The path an attribute (or a derive) starts with, as names without `r#` (`rustfmt::skip`: two), and
/// the tokens after it; no names when it starts with anything else.
fn path_of(tokens: &[TokenTree]) -> (Vec<String>, &[TokenTree]) {
    let mut path = Vec::new();
    let mut i = 0;
    while let Some(TokenTree::Ident(id)) = tokens.get(i) {
        path.push(bare(id));
        i += 1;
        let colons = matches!(tokens.get(i), Some(TokenTree::Punct(p)) if p.as_char() == ':')
            && matches!(tokens.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':');
        if !colons || !matches!(tokens.get(i + 2), Some(TokenTree::Ident(_))) {
            break;
        }
        i += 2;
    }
    (path, &tokens[i..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use anatomy_course::forbidden::{ATTENTION, CROSS_ENTROPY, NORMS};

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
    fn the_attributes_honest_files_write_pass() {
        let text = "#![allow(unused)]\n#![doc = \"A layer norm.\"]\n//! More of the module's docs.\nuse tch::Tensor;\n\n\
                    /// Moments of the last axis.\n#[inline]\n#[must_use = \"the moments\"]\n#[track_caller]\n\
                    fn moments(x: &Tensor) -> (Tensor, Tensor) { (x.shallow_clone(), x.shallow_clone()) }\n\
                    #[derive(Debug, Clone, Copy, PartialEq, Default)]\n#[non_exhaustive]\npub struct Eps(f64);\n\
                    #[derive(std::fmt::Debug, core::hash::Hash)]\nstruct Pair;\n\
                    #[cold]\n#[inline(never)]\nfn fail() -> ! { panic!(\"no\") }\n\
                    #[allow(clippy::needless_range_loop, dead_code)]\n#[warn(missing_docs)]\n#[deny(unused_must_use)]\n\
                    #[forbid(unsafe_code)]\n#[expect(unused_variables)]\n#[rustfmt::skip]\n#[rustfmt::skip::macros(vec)]\n\
                    #[doc = \"x\"]\n#[doc(hidden)]\n#[cfg_attr(test, allow(unused))]\n#[cfg_attr(not(test), inline(always))]\n\
                    #[cfg_attr(all(), cfg_attr(all(), must_use))]\npub fn layer_norm(x: &Tensor) -> Tensor { x.shallow_clone() }\n\
                    #[cfg_attr(all(), cfg_attr(all(), non_exhaustive), derive(Debug))]\nstruct Wide;\n\
                    #[macro_export]\nmacro_rules! twice { ($e:expr) => { $e + $e } }\n\
                    #[macro_use]\nmod helpers { macro_rules! thrice { ($e:expr) => { $e + $e + $e } } }\n\
                    #[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn t() {}\n    #[test]\n    #[ignore]\n\
                    #[should_panic(expected = \"no\")]\n    fn u() { fail() }\n}\n";
        assert_eq!(check(text, &[], &[&NORMS]), Verdict::Allowed);
        // Names inside a lint level's or a doc's brackets are not attributes.
        let inside =
            "#[allow(path, link, used, debugger_visualizer, global_allocator)]\n#[doc(alias = \"path\")]\nfn f() {}";
        assert_eq!(check(inside, &[], &[]), Verdict::Allowed);
    }

    #[test]
    fn every_other_attribute_is_refused_with_its_name() {
        let cases = [
            (
                "#![debugger_visualizer(natvis_file = \"/etc/passwd\")]\nfn f() {}",
                "`#[debugger_visualizer]`, which makes the compiler read another file",
            ),
            (
                "#![debugger_visualizer(gdb_script_file = \"../x.py\")]\nfn f() {}",
                "`#[debugger_visualizer]`, which makes the compiler read another file",
            ),
            (
                "#[cfg_attr(all(), debugger_visualizer(natvis_file = \"x.natvis\"))]\nmod m {}",
                "`#[debugger_visualizer]`",
            ),
            (
                "#![cfg_attr(all(), allow(unused), debugger_visualizer(natvis_file = \"x\"))]\nfn f() {}",
                "`#[debugger_visualizer]`",
            ),
            ("#[path = \"x.rs\"]\nmod m {}", "`#[path]`, which makes another file part of this one"),
            (
                "#[global_allocator]\nstatic A: std::alloc::System = std::alloc::System;",
                "`#[global_allocator]`, which is not among",
            ),
            ("#[panic_handler]\nfn p(_: &core::panic::PanicInfo) -> ! { loop {} }", "`#[panic_handler]`"),
            ("#[no_mangle]\npub fn f() {}", "`#[no_mangle]`, which changes what the linker sees"),
            ("#[export_name = \"main\"]\npub fn f() {}", "`#[export_name]`"),
            ("#[link_section = \".init_array\"]\nstatic S: u8 = 0;", "`#[link_section]`"),
            ("#[used]\nstatic S: u8 = 0;", "`#[used]`, which changes what the linker sees"),
            ("#[link(name = \"c\")]\nfn f() {}", "`#[link]`, which makes the linker read another file"),
            ("#[naked]\nfn f() {}", "`#[naked]`"),
            ("#![no_std]\nfn f() {}", "`#[no_std]`, which is not among"),
            ("#![no_main]\nfn f() {}", "`#[no_main]`"),
            ("#![feature(rustc_attrs)]\nfn f() {}", "`#[feature]`"),
            ("#![recursion_limit = \"100000\"]\nfn f() {}", "`#[recursion_limit]`"),
            ("#![crate_type = \"dylib\"]\nfn f() {}", "`#[crate_type]`"),
            ("#[foo::bar]\nfn f() {}", "`#[foo::bar]`"),
            ("#[rustfmt]\nfn f() {}", "`#[rustfmt]`"),
            ("#[proc_macro]\npub fn f() {}", "`#[proc_macro]`"),
            ("#[instrument]\nfn f() {}", "`#[instrument]`"),
            ("#[repr(align(536870912))]\nstruct S;", "`#[repr]`"),
            ("#[derive(Debug, serde::Serialize)]\nstruct S;", "derives `serde :: Serialize`"),
            ("#[cfg_attr(test, derive(Clone, Hidden))]\nstruct S;", "derives `Hidden`"),
            ("m!(#[target_feature(enable = \"avx\")] fn f() {});", "`#[target_feature]`"),
            ("m!(#[\"path\"] fn f() {});", "starts with no name"),
        ];
        for (text, words) in cases {
            let r = refused(text, &[], &[]);
            assert!(r.contains(words), "{text}: {r}");
        }
        // The first that a line holds, in its own words.
        assert_eq!(
            refused("fn f() {}\n#[cfg_attr(all(), inline, debugger_visualizer(natvis_file = \"x\"))]\nfn g() {}", &[], &[]),
            "2: uses `#[debugger_visualizer]`, which makes the compiler read another file: an exercise file is read alone"
        );
    }

    /// The issue's `gpt_block`: a private module's own `scaled_dot_product_attention`, called through it.
    const HEADS: &str = "use tch::nn::Module;\nuse tch::{Kind, Tensor};\n\
        pub use transformer_anatomy::exercises::support::GptBlockParts;\n\
        mod heads {\n    use tch::{Kind, Tensor};\n\
            pub fn scaled_dot_product_attention(q: &Tensor, k: &Tensor, v: &Tensor, mask: &Tensor) -> Tensor {\n\
                let d = q.size()[3] as f64;\n\
                (q.matmul(&k.transpose(-2, -1)) / d.sqrt()).masked_fill(mask, f64::NEG_INFINITY).softmax(-1, Kind::Float).matmul(v)\n    }\n\
            pub mod split { pub fn heads(x: &tch::Tensor) -> tch::Tensor { x.shallow_clone() } }\n}\n\
        mod block {\n    use super::heads::scaled_dot_product_attention as attend;\n\
            pub fn attend_all(q: &tch::Tensor, m: &tch::Tensor) -> tch::Tensor {\n\
                let _ = super::heads::scaled_dot_product_attention(q, q, q, m);\n        attend(q, q, q, m)\n    }\n}\n\
        use heads::scaled_dot_product_attention;\nuse self::heads::{split, scaled_dot_product_attention as sdpa};\n\
        pub fn gpt_block(x: &Tensor, parts: &GptBlockParts) -> Tensor {\n\
            let m = Tensor::ones([2, 2], (Kind::Bool, x.device())).triu(1);\n\
            let h = parts.norm_1.forward(x);\n\
            let a = heads::scaled_dot_product_attention(&h, &h, &h, &m);\n\
            let b = self::heads::scaled_dot_product_attention(&a, &a, &a, &m);\n\
            let c: Tensor = r#heads::r#scaled_dot_product_attention(&b, &b, &b, &m);\n\
            let f: fn(&Tensor, &Tensor, &Tensor, &Tensor) -> Tensor = heads::scaled_dot_product_attention;\n\
            assert_eq!(heads::split::heads(&c).size(), c.size());\n\
            sdpa(&f(&c, &c, &c, &m), &c, &c, &m) + scaled_dot_product_attention(&c, &c, &c, &m) + block::attend_all(&c, &m)\n}\n";

    #[test]
    fn a_name_the_file_defines_is_its_own_wherever_its_own_modules_reach_it() {
        assert_eq!(check(HEADS, &["exercises::support::GptBlockParts"], &[&ATTENTION]), Verdict::Allowed);
        // A module of the file's own that is named like one of tch's: what it defines is the file's own.
        for text in [
            "mod nn { pub fn layer_norm(x: &tch::Tensor) -> tch::Tensor { x.shallow_clone() } }\n\
             pub fn f(x: &tch::Tensor) -> tch::Tensor { nn::layer_norm(x) }",
            "#[allow(non_snake_case)]\nmod Tensor { pub fn layer_norm(x: &tch::Tensor) -> tch::Tensor { x.shallow_clone() } }\n\
             pub fn f(x: &tch::Tensor) -> tch::Tensor { Tensor::layer_norm(x) }",
            "pub fn layer_norm(x: &tch::Tensor) -> tch::Tensor { x.shallow_clone() }\n\
             fn g(x: &tch::Tensor) -> tch::Tensor { self::layer_norm(x) }\n\
             mod tests { use super::*; fn t(x: &tch::Tensor) { let _ = super::layer_norm(x); let _ = layer_norm(x); } }",
            "mod a { pub mod b { pub fn layer_norm() {} } }\nmod c { fn f() { super::a::b::layer_norm(); } }\nfn g() { a::b::layer_norm(); }",
            "mod a { pub fn norm() {} }\nuse a::norm as layer_norm;\nfn g() { layer_norm(); }",
        ] {
            assert_eq!(check(text, &[], &[&NORMS]), Verdict::Allowed, "{text}");
        }
    }

    #[test]
    fn a_path_through_anything_but_the_files_own_modules_is_still_refused() {
        for text in [
            // Through an item the module imports, or a name it does not define.
            "mod heads { pub use tch::Tensor; }\nfn f(q: &tch::Tensor) { heads::Tensor::scaled_dot_product_attention(q, q, q); }",
            "mod heads { pub fn other() {} }\nfn f(q: &tch::Tensor) { heads::scaled_dot_product_attention(q, q, q); }",
            "mod heads { pub fn scaled_dot_product_attention() {} }\nmod other { pub use tch::Tensor as heads; }\n\
             fn f(q: &tch::Tensor) { other::heads::scaled_dot_product_attention(q, q, q); }",
            // A glob from outside the file, in the module or anywhere.
            "mod heads { use tch::*; pub fn scaled_dot_product_attention() {} }\nfn f() { heads::scaled_dot_product_attention(); }",
            "use tch::*;\nmod heads { pub fn scaled_dot_product_attention() {} }\nfn f() { heads::scaled_dot_product_attention(); }",
            // A module of that name elsewhere: nested in another, or in a function's body.
            "mod outer { pub mod heads { pub fn scaled_dot_product_attention() {} } }\nfn f() { heads::scaled_dot_product_attention(); }",
            "mod heads { pub mod heads { pub fn scaled_dot_product_attention() {} } }\nfn f() { heads::scaled_dot_product_attention(); }",
            "fn f() { mod heads { pub fn scaled_dot_product_attention() {} } heads::scaled_dot_product_attention(); }",
            "mod heads { fn g() { mod inner { pub fn scaled_dot_product_attention() {} } } }\nfn f() { heads::inner::scaled_dot_product_attention(); }",
            // A name that hides the module where the path is written: a block's import or item, a generic
            // parameter, an import of the same name elsewhere.
            "mod nn { pub fn layer_norm() {} }\nfn f() { use tch::nn; nn::layer_norm(); }",
            "mod nn { pub mod inner { pub fn layer_norm() {} } }\n\
             fn f() { mod nn { pub use tch::nn as inner; } nn::inner::layer_norm(); }",
            "mod nn { pub fn layer_norm() {} }\nfn f<nn: Default>() { nn::layer_norm(); }",
            "mod heads { pub fn layer_norm() {} }\nmod m { use tch::nn as heads; fn f() { heads::layer_norm(); } }",
            // A glob of the modules around, in a block, brings another `heads` over the module's.
            "mod heads { pub type x = tch::Tensor; }\nmod m { mod heads { pub mod x { pub fn layer_norm() {} } }\n\
             fn f() { use super::*; heads::x::layer_norm(); } }",
            // A path a macro builds, or a name a macro binds.
            "mod heads { pub fn layer_norm() {} }\nmacro_rules! p { ($m:ident) => { $m::layer_norm() } }\nfn f() { p!(heads); }",
            "mod heads { pub fn layer_norm() {} }\nmacro_rules! t { ($x:ident) => { use tch::nn as $x; } }\nfn f() { t!(heads); heads::layer_norm(); }",
            "mod heads { pub fn layer_norm() {} }\nmacro_rules! t { ($x:ident) => { type $x = tch::Tensor; } }\nfn f() { t!(heads); heads::layer_norm(); }",
            "mod heads { pub fn layer_norm() {} }\nmacro_rules! vec { ($x:ident) => { type $x = tch::Tensor; } }\nfn f() { vec![heads]; heads::layer_norm(); }",
            "mod heads { pub fn layer_norm() {} }\nfn f() { heads::layer_norm!(); }",
            // A crate's name, or a path from the top of the crates.
            "mod tch { pub mod nn { pub fn layer_norm() {} } }\nfn f() { tch::nn::layer_norm(); }",
            "mod heads { pub fn layer_norm() {} }\nfn f() { ::heads::layer_norm(); }",
            "mod heads { pub fn layer_norm() {} }\nfn f() { <heads::X>::layer_norm(); }",
        ] {
            assert!(refused(text, &[], &[&NORMS, &ATTENTION]).contains("libtorch's finished"), "{text}");
        }
    }

    #[test]
    fn a_file_the_parser_cannot_read_is_said_to_be_unreadable() {
        assert!(matches!(check("fn f( {", &[], &[]), Verdict::Unreadable(_)));
        assert!(matches!(check("fn f() { let x = ; }", &[], &[]), Verdict::Unreadable(Refusal { line: 1, .. })));
    }
}
