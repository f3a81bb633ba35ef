pub struct Alpha;

pub fn beam() -> super::b::Beam {
    super::b::Beam(Alpha)
}
