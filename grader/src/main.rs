//! The exercise grader's binary. `anatomy exercises` writes the list of files to grade as Rust source
//! (one module per file, one check call per module) and names it in `ANATOMY_GRADER_PLAN`; this file
//! only includes it. Nothing else in the project compiles students' files, so a broken one breaks
//! nothing but its own grade. See `src/exercises/grading.rs`.
#![allow(unused_variables, dead_code, unused_imports, unused_mut)]
include!(env!("ANATOMY_GRADER_PLAN"));
