// The report shares the learner crate's build script: its tests link LibTorch through the learner's
// crate, with the rpath the script records.
include!("../../build.rs");
