//! Fuzz target: see anatomy_intake::harness::printed.
#![no_main]
libfuzzer_sys::fuzz_target!(|bytes: &[u8]| anatomy_intake::harness::printed(bytes));
