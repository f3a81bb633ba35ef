// Gives every binary, test and example of this package an rpath to LibTorch's real `lib/` folder, so that
// they start without `LD_LIBRARY_PATH`. torch-sys adds the search path for the linker but not the rpath.
// The learner's crate uses it; the exercises' and the command line's crates include this file.
use std::path::PathBuf;

fn main() {
    // The instructors' tests of the exercises (crates/cli/tests/exercises.rs) need the reference solutions;
    // in a copy handed to students (without solutions/) that file compiles to nothing. The workspace's root
    // is the folder that holds grader/, whichever package this builds.
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest.ancestors().find(|d| d.join("grader").is_dir()).unwrap_or(&manifest).to_path_buf();
    let solutions = root.join("solutions");
    // The project's folders (chapters, exercises, solutions, scripts) for code in any of its crates.
    println!("cargo:rustc-env=ANATOMY_PROJECT_ROOT={}", root.display());
    println!("cargo:rustc-check-cfg=cfg(anatomy_solutions)");
    // Watch only paths that exist: cargo counts a missing one as changed on every build, which in the
    // students' copy (no solutions/) reran this script and relinked every crate at each `cargo run`.
    // Removing solutions/ is seen; a copy that gains one later needs `cargo clean` (a copy never does).
    // Watched by paths relative to the package (`../../build.rs` from a crate below crates/), so that the
    // watch itself does not depend on where the checkout lies. (A moved checkout is still rebuilt once: its
    // LibTorch folder, and so LIBTORCH and the rpath below, moved with it. Where the program runs, it finds
    // the checkout's folders itself: src/project.rs.)
    let up = manifest.strip_prefix(&root).map(|below| below.components().map(|_| "../").collect::<String>());
    let watched = |name: &str| match &up {
        Ok(up) => format!("{up}{name}"),
        Err(_) => root.join(name).display().to_string(),
    };
    println!("cargo:rerun-if-changed={}", watched("build.rs"));
    if solutions.is_dir() {
        println!("cargo:rerun-if-changed={}", watched("solutions"));
        println!("cargo:rustc-cfg=anatomy_solutions");
    }

    println!("cargo:rerun-if-env-changed=LIBTORCH");
    let Some(libtorch) = std::env::var_os("LIBTORCH") else {
        println!("cargo:warning=LIBTORCH is not set: run `make setup` (or scripts/setup.sh) first");
        return;
    };
    let libtorch = PathBuf::from(libtorch);
    let lib = libtorch.join("lib");
    // The rpath must name the real files: libtorch_cpu.so finds the CUDA runtime stubs through
    // `$ORIGIN/../../nvidia/...`, which a symlinked folder would break.
    let lib = lib.canonicalize().unwrap_or(lib);
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    println!("cargo:rustc-env=ANATOMY_LIBTORCH_LIB={}", lib.display());
    // A LibTorch with CUDA: torch-sys names libtorch_cuda for the linker, but no code here calls it by name,
    // so the linker's --as-needed drops it, and without it LibTorch sees no GPU (`anatomy doctor` said "CUDA
    // not available" with every CUDA library beside it). Kept needed here, for this package's binaries.
    if lib.join("libtorch_cuda.so").exists() {
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
    }

    // The learner's crate only: what tch does not expose of LibTorch, its inference mode and grad mode
    // (src/inference_mode.rs), its fused AdamW (src/training/fused_adamw.rs), what it runs on
    // (src/runtime.rs) and whether a tensor is nested (src/inspect.rs).
    if std::env::var("CARGO_PKG_NAME").as_deref() == Ok("transformer-anatomy") {
        let shims = ["src/inference_mode.cpp", "src/fused_adamw.cpp", "src/runtime.cpp", "src/layout.cpp"]
            .map(|f| manifest.join(f));
        for shim in &shims {
            println!("cargo:rerun-if-changed={}", shim.display());
        }
        cc::Build::new()
            .cpp(true)
            .std("c++17")
            .files(&shims)
            .include(libtorch.join("include"))
            .flag("-w") // LibTorch's headers warn about C++20 extensions; they are not ours to fix
            .cargo_warnings(false)
            .compile("anatomy_libtorch_shims");
    }
}
