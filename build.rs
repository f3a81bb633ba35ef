//! Gives every binary, test and example of this package an rpath to LibTorch's real `lib/` folder, so that
//! they start without `LD_LIBRARY_PATH`. torch-sys adds the search path for the linker but not the rpath.
use std::path::PathBuf;

fn main() {
    // The instructors' tests of the exercises (tests/exercises.rs) need the reference solutions; in a copy
    // handed to students (without solutions/) that file compiles to nothing.
    println!("cargo:rustc-check-cfg=cfg(anatomy_solutions)");
    println!("cargo:rerun-if-changed=solutions");
    if std::path::Path::new("solutions").is_dir() {
        println!("cargo:rustc-cfg=anatomy_solutions");
    }

    println!("cargo:rerun-if-env-changed=LIBTORCH");
    let Some(libtorch) = std::env::var_os("LIBTORCH") else {
        println!("cargo:warning=LIBTORCH is not set: run `make setup` (or scripts/setup.sh) first");
        return;
    };
    let lib = PathBuf::from(libtorch).join("lib");
    // The rpath must name the real files: libtorch_cpu.so finds the CUDA runtime stubs through
    // `$ORIGIN/../../nvidia/...`, which a symlinked folder would break.
    let lib = lib.canonicalize().unwrap_or(lib);
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    println!("cargo:rustc-env=ANATOMY_LIBTORCH_LIB={}", lib.display());
}
