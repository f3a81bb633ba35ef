mod a;
mod b;
pub use a::Alpha;
