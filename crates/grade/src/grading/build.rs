//! Step 1 of grading: a unit's files and the generated `main.rs` (the [`Plan`]), and compiling them with
//! `rustc` against the built library, as cargo would (the [`Recipe`]), inside the sandbox for a class.
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufRead, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use super::run::wait_or_kill;
use anatomy_course::project_root;

use super::{tempdir_in, Setup, Source, Submission};
use crate::sandbox::{self, ChildSetup, Limits, Tier};

/// The generated `main.rs` of a unit, and which submissions its modules and lines belong to.
pub(super) struct Plan {
    /// The probe's checks, in order: the submission each one grades.
    pub(super) entries: Vec<usize>,
    /// Line number (1-based) of each check call in main.rs → submission.
    lines: BTreeMap<usize, usize>,
    /// Module file (`f003.rs`) → the submissions graded from it, and the file it is a copy of.
    files: BTreeMap<String, (Vec<usize>, PathBuf)>,
    /// The modules compiled as crates of their own before main.rs ([`own_crate`]).
    pub(super) crates: Vec<String>,
}

/// Whether a student's file is compiled as a crate of its own rather than as a module of the probe: a
/// file that may export a macro. `#[macro_export]` puts a macro at the root of the crate it is compiled
/// in, so two of one student's files exporting macros of one name collided there (E0428), though each
/// built alone. Any other name a file defines stays inside its module, and a file cannot name another's
/// (the rules refuse `crate::` and `super::` above the file). The word is looked for, not parsed: an
/// attribute's name cannot be assembled from pieces, so a file that exports a macro spells it; a file that
/// merely mentions it is built as a crate too, which changes nothing it may do.
fn own_crate(text: &[u8]) -> bool {
    text.windows(b"macro_export".len()).any(|w| w == b"macro_export")
}

impl Plan {
    /// Writes the chosen files (their bytes as read once, `sources`) and the `main.rs` that calls them.
    pub(super) fn write(unit: &[Submission], sources: &[Source], chosen: &[usize], folder: &Path) -> Result<Self> {
        let mut source = String::from("// Written by anatomy_grade::grading for one grading.\n");
        source += "#![allow(unused_variables, dead_code, unused_imports, unused_mut)]\n";
        let mut files: BTreeMap<String, (Vec<usize>, PathBuf)> = BTreeMap::new();
        let mut by_text: BTreeMap<Vec<u8>, String> = BTreeMap::new();
        let mut module_of = BTreeMap::new();
        let mut crates = Vec::new();
        for &i in chosen {
            let Ok(text) = &sources[i] else { bail!("{} was refused and cannot be compiled", unit[i].file.display()) };
            let next = format!("f{:03}", by_text.len());
            let module = by_text.entry(text.clone()).or_insert_with(|| next.clone()).clone();
            if module == next {
                fs::write(folder.join(format!("{module}.rs")), text)?;
                if own_crate(text) {
                    crates.push(module.clone()); // linked with `--extern`, reached by the same path
                } else {
                    source += &format!("#[path = \"{module}.rs\"]\nmod {module};\n");
                }
            }
            files.entry(format!("{module}.rs")).or_insert_with(|| (Vec::new(), unit[i].file.clone())).0.push(i);
            module_of.insert(i, module);
        }
        source += "fn main() {\n    use anatomy_checks::{checks, tape::record};\n";
        source += "    anatomy_checks::probe::main(&[\n";
        let mut lines = BTreeMap::new();
        for &i in chosen {
            let e = unit[i].exercise;
            let module = &module_of[&i];
            let wrapped: Vec<String> = e
                .functions
                .iter()
                .map(|(f, n)| {
                    let args: Vec<String> = (0..*n).map(|a| format!("a{a}")).collect();
                    format!("&|{0}| record(|| {module}::{f}({0}))", args.join(", "))
                })
                .collect();
            lines.insert(source.lines().count() + 1, i);
            source += &format!("        ({:?}, &|| checks::{}({})),\n", e.name, e.name, wrapped.join(", "));
        }
        source += "    ]);\n}\n";
        fs::write(folder.join("main.rs"), source)?;
        Ok(Plan { entries: chosen.to_vec(), lines, files, crates })
    }

    /// The submissions a compiler error belongs to: those of its file, or the one of its line of main.rs.
    pub(super) fn blame(&self, e: &CompilerError) -> Vec<usize> {
        if let Some((owners, _)) = self.files.get(&e.file) {
            return owners.clone();
        }
        if e.file == "main.rs" {
            return self.lines.get(&e.line).copied().into_iter().collect();
        }
        Vec::new()
    }

    pub(super) fn describe(&self, e: &CompilerError, s: &Submission) -> String {
        if e.file == "main.rs" {
            let first = e.rendered.lines().next().unwrap_or_default();
            let names: Vec<&str> = s.exercise.functions.iter().map(|(f, _)| *f).collect();
            return format!(
                "{}: the functions {} no longer have the stub's names or types ({first}); `cargo anatomy exercises reset \
                 {}` puts the stub back",
                s.file.display(),
                names.join(", "),
                s.exercise.name
            );
        }
        // The message, its `--> file:line:col` and the source lines, naming the student's own file.
        self.student_lines(e.rendered.trim_end())
    }

    /// A text that names places in the plan's copies (`f003.rs:12:5`, a compiler's `--> f003.rs:12:5`, a
    /// panic's line) naming the student's own files instead; paths inside a copy (`f003::BIG`) name the
    /// student's items alone.
    pub(super) fn student_lines(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (module, (_, original)) in &self.files {
            text = text.replace(&format!("{module}:"), &format!("{}:", original.display()));
            text = text.replace(&format!("`{}::", module.trim_end_matches(".rs")), "`");
        }
        text
    }
}

/// How to call `rustc` for a probe, read off cargo's build of the workspace (whose `anatomy-grader` package
/// names the libraries a probe links against).
#[derive(Debug)]
pub(super) struct Recipe {
    rustc: PathBuf,
    sysroot: PathBuf,
    /// The built libraries (hard links to cargo's), the only ones a probe can link with.
    pub(super) libs: PathBuf,
    externs: Vec<(String, PathBuf)>,
    native: Vec<PathBuf>,
    pub(super) libtorch_lib: PathBuf,
}

#[derive(Deserialize)]
struct CargoMessage {
    reason: String,
    #[serde(default)]
    target: Option<CargoTarget>,
    #[serde(default)]
    filenames: Vec<PathBuf>,
    #[serde(default)]
    linked_paths: Vec<String>,
    #[serde(default)]
    executable: Option<PathBuf>,
}
#[derive(Deserialize)]
struct CargoTarget {
    name: String,
}
#[derive(Deserialize)]
struct RustcMessage {
    level: String,
    rendered: Option<String>,
    spans: Vec<Span>,
}
#[derive(Deserialize)]
struct Span {
    file_name: String,
    line_start: usize,
    is_primary: bool,
}

/// The crates a probe may name: the learner's crate (the student files' `transformer_anatomy`), tch, and
/// the checks (the generated main's checks, tape and probe), never the grader itself.
const EXTERNS: [&str; 3] = ["transformer_anatomy", "tch", "anatomy_checks"];

impl Recipe {
    /// Builds every package of the workspace (`--workspace`) — the command, the libraries and
    /// `anatomy-grader` (a library naming what a probe links against) — and reads what they were built from.
    /// The command's own build (`cargo anatomy`, the command's tree) unifies the same features, so that cargo
    /// finds everything fresh and each dependency is compiled once (building `anatomy-grader` alone unified
    /// them otherwise and compiled `tch` a second time).
    pub(super) fn get(work: &Path) -> Result<Recipe> {
        static BUILD: Mutex<()> = Mutex::new(());
        let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
        let lock = File::create(work.join(".lock"))?;
        lock.lock().context("cannot lock target/exercise-grader/.lock")?;
        let Built { externs, native, artifacts } = Built::cargo_build()?;
        let libs = Built::libs_folder(work, artifacts)?;
        let externs = externs.into_iter().map(|(n, f)| (n, libs.join(f.file_name().expect("a file")))).collect();
        let rustc = std::env::var_os("RUSTC").map(PathBuf::from).unwrap_or_else(|| "rustc".into());
        let sysroot = Command::new(&rustc).args(["--print", "sysroot"]).output().context("cannot run rustc")?;
        let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
        let libtorch_lib = PathBuf::from(option_env!("ANATOMY_LIBTORCH_LIB").unwrap_or_default());
        Ok(Recipe { rustc: sysroot.join("bin").join("rustc"), sysroot, libs, externs, native, libtorch_lib })
    }

    /// The folders a probe needs at run time: LibTorch's (with the CUDA stubs beside it).
    pub(super) fn runtime_dirs(&self) -> Vec<PathBuf> {
        // .deps/libtorch/torch/lib → .deps/libtorch (libtorch_cpu finds ../../nvidia/… from its folder).
        let top = self.libtorch_lib.parent().and_then(Path::parent).unwrap_or(&self.libtorch_lib);
        vec![top.to_path_buf()]
    }
}

/// What `cargo build` made: the crates a probe names (by crate name), the folders of native libraries the
/// build scripts linked, and every library file.
struct Built {
    externs: Vec<(String, PathBuf)>,
    native: Vec<PathBuf>,
    artifacts: Vec<PathBuf>,
}

impl Built {
    /// Runs `cargo build` on the workspace and reads its JSON messages.
    fn cargo_build() -> Result<Built> {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let root = project_root();
        // In a process group of its own, which the watch mode's `q` (and a signal) kills with the rest. Run
        // in the project's folder, whatever folder the grader was started in (Gradescope's /autograder,
        // PrairieLearn's): cargo reads `.cargo/config.toml`, where LibTorch is found, from the folder it runs
        // in, not from the manifest's.
        let child = Command::new(&cargo)
            .args(["build", "--workspace", "--quiet", "--message-format=json"])
            .arg("--manifest-path")
            .arg(root.join("Cargo.toml"))
            .current_dir(&root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .with_context(|| format!("cannot run {cargo:?} to build the grader: is Rust installed?"))?;
        let _group = super::cleanup::Group::new(child.id());
        let output = child.wait_with_output().context("cannot read cargo's build of the grader")?;
        let (mut externs, mut native, mut artifacts): (Vec<(String, PathBuf)>, Vec<PathBuf>, Vec<PathBuf>) =
            (Vec::new(), Vec::new(), Vec::new());
        for line in output.stdout.lines() {
            let Ok(m) = serde_json::from_str::<CargoMessage>(&line?) else { continue };
            match m.reason.as_str() {
                "compiler-artifact" => {
                    // Libraries only: not the programs (the command) nor the build scripts, nor the recipe's
                    // own empty library.
                    let name = m.target.map(|t| t.name).unwrap_or_default();
                    if m.executable.is_some() || name == "build-script-build" || name == "anatomy_grader" {
                        continue;
                    }
                    // A workspace member's library is also copied up to `target/debug/libNAME.rlib`, a name
                    // without the hash by which rustc finds it as another crate's dependency: use the one
                    // in `deps/`, beside its `.rmeta`.
                    let hashed = m.filenames.iter().find(|f| f.extension().is_some_and(|x| x == "rmeta")).cloned();
                    for mut f in m.filenames {
                        if let Some(rlib) = hashed.as_ref().map(|r| r.with_extension("rlib")).filter(|r| r.is_file()) {
                            if f.extension().is_some_and(|x| x == "rlib") {
                                f = rlib;
                            }
                        }
                        if EXTERNS.contains(&name.as_str()) && f.extension().is_some_and(|x| x == "rlib") {
                            externs.push((name.clone(), f.clone()));
                        }
                        artifacts.push(f);
                    }
                }
                "build-script-executed" => {
                    for p in m.linked_paths {
                        native.push(PathBuf::from(p.split_once('=').map(|(_, p)| p.to_string()).unwrap_or(p)));
                    }
                }
                _ => {}
            }
        }
        if !output.status.success() || externs.len() != EXTERNS.len() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            bail!(
                "building the exercise grader failed: {}",
                stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("cargo gave no reason")
            );
        }
        Ok(Built { externs, native, artifacts })
    }

    /// A folder holding the built libraries and nothing else (no earlier probe, no student's file), named
    /// after what it holds: a grading running at the same time may be compiling against an older one.
    fn libs_folder(work: &Path, mut artifacts: Vec<PathBuf>) -> Result<PathBuf> {
        artifacts.sort();
        artifacts.dedup();
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for f in &artifacts {
            std::hash::Hash::hash(&(f, fs::metadata(f).and_then(|m| m.modified()).ok()), &mut hasher);
        }
        let libs = work.join(format!("libs-{:016x}", std::hash::Hasher::finish(&hasher)));
        if !libs.is_dir() {
            let partial = tempdir_in(work, "libs-partial")?;
            for f in &artifacts {
                let to = partial.join(f.file_name().expect("a file"));
                if fs::hard_link(f, &to).is_err() {
                    fs::copy(f, &to).with_context(|| format!("cannot copy {}", f.display()))?;
                }
            }
            if fs::rename(&partial, &libs).is_err() {
                let _ = fs::remove_dir_all(&partial);
            }
            // Older folders (from before the library was rebuilt) go once no grading can still be using them.
            for old in fs::read_dir(work)?.filter_map(|e| e.ok()).map(|e| e.path()) {
                let stale = old.file_name().is_some_and(|n| n.to_string_lossy().starts_with("libs-"))
                    && old != libs
                    && fs::metadata(&old).and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok())
                        > Some(Duration::from_secs(3600));
                if stale {
                    let _ = fs::remove_dir_all(&old);
                }
            }
        }
        Ok(libs)
    }
}

/// A compiler error, as rustc's JSON diagnostics give it.
#[derive(Debug)]
pub(super) struct CompilerError {
    pub(super) file: String,
    line: usize,
    pub(super) rendered: String,
}

pub(super) enum Compiled {
    Probe,
    Errors(Vec<CompilerError>),
    /// The compiler stopped without an error that names a file: past its time limit, killed at a limit
    /// (file size, memory, CPU), crashed, or failed in silence. Why, in words that name the limit.
    Stopped(String),
}

/// Compiles the plan's own crates (`folder/fNNN.rs` into `libfNNN.rlib`), then `folder/main.rs` into
/// `folder/probe`, stopping at the first that does not build.
pub(super) fn compile(cx: &Setup, folder: &Path, crates: &[String]) -> Result<Compiled> {
    for name in crates {
        match rustc(cx, folder, &arguments(cx.recipe, Some(name), crates))? {
            Compiled::Probe => {}
            failed => return Ok(failed),
        }
    }
    rustc(cx, folder, &arguments(cx.recipe, None, crates))
}

/// rustc's arguments for one of a plan's own crates (`library`), or for the probe, which links them all.
fn arguments(r: &Recipe, library: Option<&String>, crates: &[String]) -> Vec<String> {
    // Line tables, so that a panic in a library (a LibTorch error) is placed at the student's call that led
    // to it, from the backtrace (`anatomy_checks::tape::remember_panic_place`).
    let mut args: Vec<String> =
        vec!["--edition=2021".into(), "--error-format=json".into(), "-Cdebuginfo=line-tables-only".into()];
    args.extend(["-Awarnings".into(), "-L".into(), format!("dependency={}", r.libs.display())]);
    for (name, file) in &r.externs {
        // A student's crate reaches the learner's crate and tch only, as a module of the probe may.
        if library.is_none() || name != "anatomy_checks" {
            args.extend(["--extern".into(), format!("{name}={}", file.display())]);
        }
    }
    for p in &r.native {
        args.extend(["-L".into(), format!("native={}", p.display())]);
    }
    match library {
        Some(name) => args.extend(["--crate-type=rlib".into(), format!("--crate-name={name}"), format!("{name}.rs")]),
        None => {
            for name in crates {
                args.extend(["--extern".into(), format!("{name}=lib{name}.rlib")]);
            }
            args.extend(["--crate-type=bin".into(), "--crate-name=probe".into()]);
            args.extend(["-o".into(), "probe".into(), format!("-Clink-arg=-Wl,-rpath,{}", r.libtorch_lib.display())]);
            args.push("main.rs".into());
        }
    }
    args
}

/// One run of rustc in `folder` with `args`, in the sandbox and under the compile limits: built, the
/// errors it named, or why it stopped.
fn rustc(cx: &Setup, folder: &Path, args: &[String]) -> Result<Compiled> {
    let r = cx.recipe;
    let built = args.iter().find_map(|a| a.strip_prefix("--crate-name=")).map_or("probe".to_string(), |name| {
        if name == "probe" {
            name.to_string()
        } else {
            format!("lib{name}.rlib")
        }
    });
    let mut readable = vec![r.sysroot.clone(), r.libs.clone()];
    readable.extend(r.native.iter().cloned());
    readable.extend(r.runtime_dirs());
    let mut command = match cx.tier {
        Tier::Bubblewrap(bwrap) => sandbox::compile_command(bwrap, folder, &readable, &r.rustc, cx.limits.disk),
        Tier::Landlock(_) => sandbox::landlock::compile_command(folder, &readable, &r.rustc)?,
        Tier::None => {
            let mut c = Command::new(&r.rustc);
            c.current_dir(folder);
            c
        }
    };
    command.args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    // The compiler writes the probe into the scratch folder: no file of it larger than the student's disk,
    // and no more memory than the student's budget for it.
    let limits = &cx.limits;
    let cpu_seconds = 2 * limits.compile_time.as_secs() + 10;
    ChildSetup { memory: limits.compile_memory, cpu_seconds, file_size: limits.disk, open_at: vec![], dup_to: vec![] }
        .apply(&mut command);
    command.process_group(0);
    let mut child = command.spawn().with_context(|| format!("cannot run {}", r.rustc.display()))?;
    let _group = super::cleanup::Group::new(child.id());
    let stderr = read_in_background(child.stderr.take().expect("piped"), 4 << 20);
    let status = wait_or_kill(&mut child, limits.compile_time)?;
    let text = stderr.join().unwrap_or_default();
    let mut errors = Vec::new();
    for line in text.lines() {
        let Ok(m) = serde_json::from_str::<RustcMessage>(line) else { continue };
        if m.level != "error" {
            continue;
        }
        let span = m.spans.iter().find(|s| s.is_primary).or(m.spans.first());
        errors.push(CompilerError {
            file: span.map(|s| s.file_name.clone()).unwrap_or_default(),
            line: span.map(|s| s.line_start).unwrap_or(0),
            rendered: m.rendered.unwrap_or_default(),
        });
    }
    let stopped_at_a_limit = status.is_none_or(|s| signal_of(s).is_some());
    if !errors.is_empty() && !stopped_at_a_limit {
        return Ok(Compiled::Errors(errors));
    }
    match status {
        Some(s) if s.success() && folder.join(&built).is_file() => Ok(Compiled::Probe),
        _ => {
            // What a stopped compiler left half-written (a probe or object files of up to the file-size
            // limit each) goes now, not when the unit is done: the class's disk holds no more than it must.
            for entry in fs::read_dir(folder)?.flatten() {
                let path = entry.path();
                if path.is_file() && path.extension().is_none_or(|x| x != "rs") {
                    let _ = fs::remove_file(&path);
                }
            }
            Ok(Compiled::Stopped(why_stopped(status, &text, limits)))
        }
    }
}

/// For a build that stopped without naming a file: compiles each of `chosen` on its own (two at a time, each
/// in a folder of its own below `folder`) and returns why, for each file that does not build alone. A
/// file that never finishes compiling costs one more time limit, whatever the number of files.
pub(super) fn isolate(
    unit: &[Submission],
    sources: &[Source],
    chosen: &[usize],
    folder: &Path,
    cx: &Setup,
) -> Result<BTreeMap<usize, String>> {
    let failed = Mutex::new(BTreeMap::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let lane = || -> Result<()> {
        loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let Some(&i) = chosen.get(k) else { return Ok(()) };
            let alone = folder.join(format!("alone-{i:03}"));
            fs::create_dir_all(&alone)?;
            let plan = Plan::write(unit, sources, &[i], &alone)?;
            let why = match compile(cx, &alone, &plan.crates)? {
                Compiled::Probe => None,
                Compiled::Errors(mut errors) => {
                    errors.sort_by_key(|e| e.file == "main.rs");
                    let e = errors.iter().find(|e| !plan.blame(e).is_empty()).unwrap_or(&errors[0]);
                    Some(plan.describe(e, &unit[i]))
                }
                Compiled::Stopped(why) => Some(why),
            };
            let _ = fs::remove_dir_all(&alone);
            if let Some(why) = why {
                failed.lock().unwrap_or_else(|e| e.into_inner()).insert(i, why);
            }
        }
    };
    std::thread::scope(|scope| {
        let lanes: Vec<_> = (0..2.min(chosen.len())).map(|_| scope.spawn(lane)).collect();
        lanes.into_iter().try_for_each(|l| l.join().expect("a lane does not panic"))
    })?;
    Ok(failed.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// The signal a process died of: its own, or, under bubblewrap (where the compiler is not our child),
/// the exit status 128 + N that bwrap passes on.
pub(super) fn signal_of(status: std::process::ExitStatus) -> Option<i32> {
    status.signal().or_else(|| status.code().filter(|c| (129..160).contains(c)).map(|c| c - 128))
}

/// Why a compiler run that named no file stopped, in words that name the limit it met.
fn why_stopped(status: Option<std::process::ExitStatus>, stderr: &str, limits: &Limits) -> String {
    let Some(status) = status else {
        return format!(
            "compiling took more than {} s and was stopped (a constant, macro or type that never finishes?)",
            limits.compile_time.as_secs()
        );
    };
    if stderr.contains("memory allocation of") || stderr.contains("out of memory") {
        return format!(
            "compiling needed more than {} of memory and was stopped (a macro that grows without end, or a huge \
             constant?)",
            limits.compile_memory_words()
        );
    }
    if stderr.contains("has overflowed its stack") {
        return "the compiler overflowed its stack (a macro, type or constant nested too deeply?)".into();
    }
    match signal_of(status) {
        Some(libc::SIGXFSZ) => format!(
            "the compiled program would be larger than {} and the compiler was stopped (a huge static or constant?)",
            limits.disk_words()
        ),
        Some(libc::SIGXCPU) => {
            format!("compiling used more than {} s of CPU time and was stopped", 2 * limits.compile_time.as_secs() + 10)
        }
        Some(libc::SIGKILL) => format!(
            "the compiler was killed (most likely it needed more than {} of memory)",
            limits.compile_memory_words()
        ),
        Some(libc::SIGSEGV) => "the compiler crashed (segmentation fault)".into(),
        Some(n) => format!("the compiler was killed by signal {n}"),
        None => {
            // No error message reached here (compile returns those as Errors): the compiler's last line.
            let said = stderr.lines().rev().find(|l| !l.trim().is_empty()).map(|l| l.trim().to_string());
            let said: String = said.unwrap_or_else(|| "no message".into()).chars().take(300).collect();
            if status.success() {
                format!("the compiler wrote no program ({said})")
            } else {
                format!("does not build: {said}")
            }
        }
    }
}

/// Reads a child's output to its end on another thread (keeping at most `keep` bytes), so that a full pipe
/// never blocks the child.
fn read_in_background(mut pipe: impl Read + Send + 'static, keep: usize) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = Vec::new();
        let mut buffer = [0u8; 8192];
        while let Ok(n) = pipe.read(&mut buffer) {
            if n == 0 {
                break;
            }
            if text.len() < keep {
                text.extend_from_slice(&buffer[..n.min(keep - text.len())]);
            }
        }
        String::from_utf8_lossy(&text).into_owned()
    })
}
