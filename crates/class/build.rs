// The class shares the learner crate's build script: its unit tests link LibTorch through the grader and
// the learner's crate, with the rpath the script records.
include!("../../build.rs");
