pub struct Beam;

pub fn alpha() -> super::a::Alpha {
    super::a::Alpha(Beam)
}
