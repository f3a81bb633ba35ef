// `b` imports `a` only in a grouped path written inside a macro's definition.
macro_rules! alpha {
    () => {{
        use super::{a::Alpha};
        Alpha
    }};
}

pub const NAME: &str = "beam";

pub fn alpha() -> impl Sized {
    alpha!()
}
