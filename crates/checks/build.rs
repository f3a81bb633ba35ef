// The checks share the learner crate's build script: their tests link LibTorch with the rpath it records.
include!("../../build.rs");
