//! The names through which a student's file can reach a finished operation (`anatomy_course::forbidden::
//! REACHING`), read off the sources of the two crates a file can reach — `tch` (as cargo unpacked it) and
//! the learner's crate (`src/`) — and held equal to the committed list. With
//! `UPDATE_FORBIDDEN_NAMES=1` the test writes the list instead, after a change of either crate.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anatomy_course::forbidden::{FAMILIES, REACHING};
use proc_macro2::{TokenStream, TokenTree};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `tch`'s `src/` folder, where cargo unpacked the version the workspace's lock file names (the build
/// that runs before any test put it there; no network is asked).
fn tch_sources() -> PathBuf {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).unwrap();
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"tch\"\n"))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = \"")))
        .map(|v| v.trim_end_matches('"').to_string())
        .expect("tch in Cargo.lock");
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo"));
    let registries = std::fs::read_dir(home.join("registry").join("src")).expect("cargo's unpacked sources");
    registries
        .flatten()
        .map(|r| r.path().join(format!("tch-{version}")).join("src"))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| panic!("tch {version}'s sources are not under {}", home.display()))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// Every name a token stream declares: after `fn`, `struct`, `enum`, `union`, `trait`, `type`, `const`,
/// `static` and `mod`, and a field or binding's name before a `:` (`pub layer_norm: LayerNorm`).
fn declared(stream: TokenStream, out: &mut BTreeSet<String>) {
    let tokens: Vec<TokenTree> = stream.into_iter().collect();
    for (i, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Group(g) => declared(g.stream(), out),
            TokenTree::Ident(id) => {
                let word = id.to_string();
                let keyword = ["fn", "struct", "enum", "union", "trait", "type", "const", "static", "mod"];
                if keyword.contains(&word.as_str()) {
                    if let Some(TokenTree::Ident(name)) = tokens.get(i + 1) {
                        out.insert(name.to_string().trim_start_matches("r#").to_string());
                    }
                }
                let field = matches!(tokens.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':')
                    && !matches!(tokens.get(i + 2), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                if field {
                    out.insert(word.trim_start_matches("r#").to_string());
                }
            }
            _ => {}
        }
    }
}

#[test]
fn the_names_that_reach_a_finished_operation_are_read_off_tch_and_the_learners_crate() {
    let mut files = Vec::new();
    rust_files(&tch_sources(), &mut files);
    rust_files(&root().join("src"), &mut files);
    let mut names = BTreeSet::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        if let Ok(tokens) = TokenStream::from_str(&text) {
            declared(tokens, &mut names);
        }
    }
    let reaching: Vec<&String> = names.iter().filter(|n| FAMILIES.iter().any(|f| f.matches(n))).collect();
    // Well known ones, so that a broken reader cannot pass by finding nothing.
    for known in [
        "layer_norm",
        "f_layer_norm",
        "native_layer_norm",
        "LayerNorm",
        "group_norm",
        "scaled_dot_product_attention",
        "cross_entropy_loss",
        "nll_loss",
    ] {
        assert!(reaching.iter().any(|n| *n == known), "{known} not found in tch's sources");
    }
    let mut text = String::from(
        "# Every name tch 0.26 and the learner's crate declare that holds a part of a forbidden family's names\n\
         # (crates/course/src/forbidden.rs): written by crates/intake/tests/forbidden_names.rs.\n",
    );
    for name in &reaching {
        text += name;
        text += "\n";
    }
    let path = root().join("crates/course/src/forbidden-names.txt");
    if std::env::var_os("UPDATE_FORBIDDEN_NAMES").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    assert!(
        REACHING == text,
        "crates/course/src/forbidden-names.txt is not what tch's and the learner's crate's sources declare: \
         run UPDATE_FORBIDDEN_NAMES=1 cargo test -p anatomy-intake --test forbidden_names, and review the diff"
    );
}
