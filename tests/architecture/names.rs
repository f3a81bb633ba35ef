//! Names, read with syn: the public types a file declares, and the names it re-exports from another crate
//! of the workspace. ARCHITECTURE.md's "one name per concept" is held by the tests that use these.
use syn::{Item, UseTree, Visibility};

/// The crates of this workspace, as Rust names them in a path.
fn workspace_crate(first: &str) -> bool {
    first == "transformer_anatomy" || first.starts_with("anatomy_")
}

/// Whether a module is left out: `#[cfg(test)]` modules hold tests' own helper types (only that exact
/// condition: `cfg(not(test))` or a feature whose name holds "test" is code like any other).
fn is_test_module(m: &syn::ItemMod) -> bool {
    m.attrs.iter().any(|a| match &a.meta {
        syn::Meta::List(list) => list.path.is_ident("cfg") && list.tokens.to_string() == "test",
        _ => false,
    })
}

/// The structs, enums, traits and type aliases declared `pub` in these items (and in their inline modules
/// that are not tests'), by name.
pub fn public_types(items: &[Item]) -> Vec<String> {
    let mut names = Vec::new();
    for item in items {
        let (vis, ident) = match item {
            Item::Struct(i) => (&i.vis, &i.ident),
            Item::Enum(i) => (&i.vis, &i.ident),
            Item::Trait(i) => (&i.vis, &i.ident),
            Item::Type(i) => (&i.vis, &i.ident),
            Item::Mod(m) if !is_test_module(m) => {
                names.extend(m.content.as_ref().map(|(_, items)| public_types(items)).unwrap_or_default());
                continue;
            }
            _ => continue,
        };
        if matches!(vis, Visibility::Public(_)) {
            names.push(ident.to_string());
        }
    }
    names
}

/// Whether an import tree starts with a crate of this workspace: `anatomy_course::find`, the crate itself
/// (`anatomy_course`, `anatomy_grade as grade`), or any of a group (`{anatomy_course::find, std::fs}`).
fn from_workspace(tree: &UseTree) -> bool {
    match tree {
        UseTree::Path(p) => workspace_crate(&p.ident.to_string()),
        UseTree::Name(n) => workspace_crate(&n.ident.to_string()),
        UseTree::Rename(r) => workspace_crate(&r.ident.to_string()),
        UseTree::Group(g) => g.items.iter().any(from_workspace),
        UseTree::Glob(_) => false,
    }
}

/// The `pub` or `pub(…)` imports (and `pub extern crate`s) in these items that offer a crate of this
/// workspace, or a name it defines, again under this one, written as paths.
pub fn reexports(items: &[Item]) -> Vec<String> {
    let mut found = Vec::new();
    let text = |tokens: &dyn quote::ToTokens| tokens.to_token_stream().to_string().replace(' ', "");
    for item in items {
        match item {
            Item::Use(u) if !matches!(u.vis, Visibility::Inherited) && from_workspace(&u.tree) => {
                found.push(text(&u.tree));
            }
            Item::ExternCrate(e)
                if !matches!(e.vis, Visibility::Inherited) && workspace_crate(&e.ident.to_string()) =>
            {
                found.push(format!("extern crate {}", e.ident));
            }
            Item::Mod(m) if !is_test_module(m) => {
                found.extend(m.content.as_ref().map(|(_, items)| reexports(items)).unwrap_or_default());
            }
            _ => {}
        }
    }
    found
}
