//! Not an import: [`crate::b`] is a doc link.
pub struct Alpha;

// use super::b::Beam;
pub const PATH: &str = "super::b::Beam";
/* crate::b::Beam */

// An inline module named like a sibling: inside `tests`, `super::b` is this file's own `b`, not the
// crate's, and the char literal's brace is no brace of the code.
mod b {
    pub struct Local;
}

#[cfg(test)]
mod tests {
    use super::b::Local;
    const OPEN: char = '\u{7b}';
}
