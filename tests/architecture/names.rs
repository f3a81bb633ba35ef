//! Names, read with syn: the public types a file declares, and the names it re-exports from another crate
//! of the workspace. ARCHITECTURE.md's "one name per concept" is held by the tests that use these.
use syn::{Item, UseTree, Visibility};

/// The crates of this workspace, as Rust names them in a path.
fn workspace_crate(first: &str) -> bool {
    first == "transformer_anatomy" || first.starts_with("anatomy_")
}

/// Whether a module is left out: `#[cfg(test)]` modules hold tests' own helper types.
fn is_test_module(m: &syn::ItemMod) -> bool {
    let text = |meta: &syn::Meta| quote::ToTokens::to_token_stream(meta).to_string();
    m.attrs.iter().any(|a| a.path().is_ident("cfg") && text(&a.meta).contains("test"))
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

/// The `pub` or `pub(…)` imports in these items whose path starts with a crate of this workspace (a name
/// that crate defines, offered again under this one), written as paths.
pub fn reexports(items: &[Item]) -> Vec<String> {
    let mut found = Vec::new();
    for item in items {
        match item {
            Item::Use(u) if !matches!(u.vis, Visibility::Inherited) => {
                if let UseTree::Path(p) = &u.tree {
                    if workspace_crate(&p.ident.to_string()) {
                        found.push(quote::ToTokens::to_token_stream(&u.tree).to_string().replace(' ', ""));
                    }
                }
            }
            Item::Mod(m) if !is_test_module(m) => {
                found.extend(m.content.as_ref().map(|(_, items)| reexports(items)).unwrap_or_default());
            }
            _ => {}
        }
    }
    found
}
