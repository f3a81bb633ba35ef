// The tools share the learner crate's build script: the rpath to LibTorch for their tests.
include!("../../build.rs");
