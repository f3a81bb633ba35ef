//! How long each function is, read with syn: from its `fn` to its closing brace, as a reader counts the
//! lines (attributes and doc comments above it aside). Every function with a body counts: free functions,
//! methods, a trait's default bodies, a function within another (measured on its own and within its outer
//! one), and a function among a macro's tokens when they read as items (`thread_local!`, a test macro's).
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};

/// The longest a function may be.
pub const FN_LINES: usize = 80;

/// Each function of one file with its name, its first line and its length in lines.
struct Measure {
    found: Vec<(String, usize, usize)>,
}

impl Measure {
    fn body(&mut self, sig: &syn::Signature, block: &syn::Block) {
        let first = sig.fn_token.span.start().line;
        let last = block.brace_token.span.close().start().line;
        self.found.push((sig.ident.to_string(), first, last + 1 - first));
    }
}

impl<'ast> Visit<'ast> for Measure {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.body(&f.sig, &f.block);
        visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.body(&f.sig, &f.block);
        visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.body(&f.sig, block);
        }
        visit::visit_trait_item_fn(self, f);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if let Ok(items) = syn::parse2::<syn::File>(m.tokens.clone()) {
            self.visit_file(&items);
        }
        visit::visit_macro(self, m);
    }
}

/// Each function of `file`: its name, first line and length in lines.
pub fn functions(file: &Path) -> Vec<(String, usize, usize)> {
    let mut measure = Measure { found: Vec::new() };
    measure.visit_file(&super::imports::parse(file));
    measure.found
}

/// The functions over [`FN_LINES`] in `files`, as `PATH:LINE NAME (N lines)`, the path from `root`.
pub fn long_functions(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut long = Vec::new();
    for file in files {
        for (name, line, n) in functions(file).into_iter().filter(|f| f.2 > FN_LINES) {
            long.push(format!("{}:{line} {name} ({n} lines)", file.strip_prefix(root).unwrap().display()));
        }
    }
    long
}
