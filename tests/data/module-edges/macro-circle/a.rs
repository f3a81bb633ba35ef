// `a` imports `b` only inside a macro's tokens, which syn leaves unread.
pub struct Alpha;

pub fn named() -> String {
    format!("{}", crate::b::NAME)
}
