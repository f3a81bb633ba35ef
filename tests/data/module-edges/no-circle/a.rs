//! Not an import: [`crate::b`] is a doc link.
pub struct Alpha;

// use super::b::Beam;
pub const PATH: &str = "super::b::Beam";
/* crate::b::Beam */
