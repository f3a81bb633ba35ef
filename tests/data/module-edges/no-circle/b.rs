pub struct Beam(pub super::a::Alpha);
