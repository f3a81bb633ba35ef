//! The edges between a crate's top modules (a file or folder right under its `src/`), read with syn, and the
//! first cycle among them. An edge is any path that starts at `crate::`, `super::` or `self::` and resolves,
//! from the module it is written in, to another top module: in a `use` (grouped imports however nested,
//! `super::super::`), in code and types, and in a macro's tokens (`format!("{}", crate::a::NAME)`); a
//! folder's `mod.rs` is the folder's module (its `super::` is the crate root), and inside an inline
//! `mod tests { … }`, `super::` is the file's own module. A name the crate root imports from a top module
//! counts as that module (`crate::BertConfig` is an import of `config` when lib.rs says `pub use
//! config::BertConfig`). Comments, strings and doc links are no tokens, so they never count.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// Each top module and the top modules it imports.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every `.rs` file under `dir`, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// A file read as Rust; a file syn cannot read fails the test with its name.
pub fn parse(file: &Path) -> syn::File {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{} is not Rust syn can read: {e}", file.display()))
}

/// The module a file is, from the crate's `src/`: `a/b.rs` and `a/b/mod.rs` are `[a, b]`, lib.rs `[]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let mut parts: Vec<String> =
        file.strip_prefix(src).unwrap().iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !["mod", "lib", "main"].contains(&stem) {
        parts.push(stem.to_string());
    }
    parts
}

/// A use tree as paths of segments, each with the name it binds (`a::{b, c as d}`: `a::b` as `b`, `a::c` as
/// `d`; a glob binds `*`).
fn use_paths(tree: &syn::UseTree) -> Vec<(Vec<String>, String)> {
    match tree {
        syn::UseTree::Path(p) => use_paths(&p.tree)
            .into_iter()
            .map(|(mut path, name)| {
                path.insert(0, p.ident.to_string());
                (path, name)
            })
            .collect(),
        syn::UseTree::Name(n) => vec![(vec![n.ident.to_string()], n.ident.to_string())],
        syn::UseTree::Rename(r) => vec![(vec![r.ident.to_string()], r.rename.to_string())],
        syn::UseTree::Glob(_) => vec![(vec!["*".to_string()], "*".to_string())],
        syn::UseTree::Group(g) => g.items.iter().flat_map(use_paths).collect(),
    }
}

/// Whether `trees[at..]` starts with `::`.
fn colons(trees: &[TokenTree], at: usize) -> bool {
    let colon = |i: usize| matches!(trees.get(i), Some(TokenTree::Punct(p)) if p.as_char() == ':');
    colon(at) && colon(at + 1) && matches!(&trees[at], TokenTree::Punct(p) if p.spacing() == Spacing::Joint)
}

/// The paths of a use tree written in tokens (a macro's, which syn leaves unread), from its first segment:
/// `a::b`, `a::{b, c::{d, e}}`, `a::*` and `a as b`. Also says how many tokens the tree took.
fn token_paths(trees: &[TokenTree]) -> (Vec<Vec<String>>, usize) {
    let Some(TokenTree::Ident(first)) = trees.first() else { return (vec![vec![]], 0) };
    let name = first.to_string();
    if !colons(trees, 1) {
        return (vec![vec![name]], 1);
    }
    let prefixed = |paths: Vec<Vec<String>>| {
        paths.into_iter().map(|p| std::iter::once(name.clone()).chain(p).collect()).collect::<Vec<_>>()
    };
    match trees.get(3) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
            let items = inner.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','));
            (prefixed(items.flat_map(|item| token_paths(item).0).collect()), 4)
        }
        Some(TokenTree::Ident(_)) => {
            let (paths, used) = token_paths(&trees[3..]);
            (prefixed(paths), 3 + used)
        }
        _ => (vec![vec![name]], 3),
    }
}

/// Every path in `tokens` (and the groups within) that starts at `crate::`, `super::` or `self::`: only a
/// path's first segment starts one (`x::self::` cannot, and `a.self` is no path).
fn paths_in_tokens(tokens: TokenStream, out: &mut Vec<Vec<String>>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut at = 0;
    while at < trees.len() {
        match &trees[at] {
            TokenTree::Group(g) => paths_in_tokens(g.stream(), out),
            TokenTree::Ident(i)
                if ["crate", "super", "self"].contains(&i.to_string().as_str())
                    && colons(&trees, at + 1)
                    && !(at >= 2 && colons(&trees, at - 2)) =>
            {
                let (paths, used) = token_paths(&trees[at..]);
                out.extend(paths);
                at += used.max(1);
                continue;
            }
            _ => {}
        }
        at += 1;
    }
}

/// Reads one file's paths, knowing the inline module each is written in.
struct Reader<'a> {
    /// The file's module, then the inline modules around the path being read.
    here: Vec<String>,
    tops: &'a BTreeSet<String>,
    /// Names the crate root imports from a top module, each with that module.
    imported_at_root: &'a BTreeMap<String, String>,
    found: BTreeSet<String>,
}

impl Reader<'_> {
    /// A path that starts at `crate`, `super` or `self`, made absolute from where it is written.
    fn resolve(&mut self, path: &[String]) {
        let mut base = match path.first().map(String::as_str) {
            Some("crate") => vec![],
            Some("self") => self.here.clone(),
            Some("super") => self.here[..self.here.len().saturating_sub(1)].to_vec(),
            _ => return,
        };
        let mut rest = &path[1..];
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        let mut full: Vec<&String> = base.iter().chain(rest).filter(|s| *s != "self").collect();
        let first = full.first().map(|s| s.as_str());
        let via_root = first.filter(|s| !self.tops.contains(*s)).and_then(|s| self.imported_at_root.get(s));
        if let Some(module) = via_root {
            full.insert(0, module);
        }
        if let Some(top) = full.first().filter(|t| self.tops.contains(t.as_str()) && **t != self.here[0].as_str()) {
            self.found.insert(top.to_string());
        }
    }
}

impl<'ast> Visit<'ast> for Reader<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.here.push(m.ident.to_string());
        visit::visit_item_mod(self, m);
        self.here.pop();
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        for (path, _) in use_paths(&u.tree) {
            self.resolve(&path);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            self.resolve(&p.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>());
        }
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let mut paths = Vec::new();
        paths_in_tokens(m.tokens.clone(), &mut paths);
        for path in paths {
            self.resolve(&path);
        }
        visit::visit_macro(self, m);
    }
}

/// The names the crate root (lib.rs or main.rs) imports from its own top modules, each with its module:
/// `pub use config::{BertConfig, …};` makes `crate::BertConfig` an import of `config`.
fn imported_at_root(src: &Path, tops: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for root in ["lib.rs", "main.rs"].map(|r| src.join(r)).iter().filter(|r| r.exists()) {
        for item in parse(root).items {
            let syn::Item::Use(u) = item else { continue };
            for (mut path, name) in use_paths(&u.tree) {
                if path.first().is_some_and(|s| s == "crate" || s == "self") {
                    path.remove(0);
                }
                if path.len() >= 2 && tops.contains(&path[0]) && name != "*" && name != "self" {
                    names.entry(name).or_insert_with(|| path[0].clone());
                }
            }
        }
    }
    names
}

/// The edges between the top modules of the crate whose sources are `src`.
pub fn edges(src: &Path) -> Graph {
    let tops: BTreeSet<String> = std::fs::read_dir(src)
        .unwrap_or_else(|e| panic!("{}: {e}", src.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|name| name != "lib" && name != "main")
        .collect();
    let imported_at_root = imported_at_root(src, &tops);
    let mut graph = Graph::new();
    for file in rust_files(src) {
        let here = module_path(src, &file);
        if here.is_empty() {
            continue;
        }
        let top = here[0].clone();
        let mut reader = Reader { here, tops: &tops, imported_at_root: &imported_at_root, found: BTreeSet::new() };
        reader.visit_file(&parse(&file));
        if !reader.found.is_empty() {
            graph.entry(top).or_default().extend(reader.found);
        }
    }
    graph
}

/// The first cycle of `graph` (depth first, in name order), as the modules along it, the first repeated at
/// the end: `[a, b, a]`.
pub fn cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(graph: &Graph, node: &str, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(start) = path.iter().position(|p| p == next) {
                return Some(path[start..].iter().chain([next]).cloned().collect());
            }
            if !done.contains(next) {
                if let Some(found) = visit(graph, next, path, done) {
                    return Some(found);
                }
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| (!done.contains(node)).then(|| visit(graph, node, &mut vec![], &mut done)).flatten())
}
