use super::{
    b::Beam,
};

pub struct Alpha(pub Beam);
