// The command line shares the learner crate's build script: the rpath to LibTorch, and the solutions switch.
include!("../../build.rs");
