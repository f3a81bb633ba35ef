// The platforms share the learner crate's build script, which records the project's root
// (ANATOMY_PROJECT_ROOT, read by the schema tests' tests/common/schema.rs).
include!("../../build.rs");
