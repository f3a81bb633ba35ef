//! Compiling exercise files, running them, and deciding their grades — in three separate steps.
//!
//! 1. **Build.** The files of one *unit* — one student's files in a class, or a learner's own files — are
//!    copied into a scratch folder of their own, beside a generated `main.rs` (one module per file, one
//!    check call per file, the functions wrapped in [`tape::record`]), and compiled with `rustc` against
//!    the already built library. A file the compiler blames is reported with its first error and left out
//!    of the next build, so every other file is still graded.
//! 2. **Probe.** The program runs each check with the student's functions and writes nothing but what
//!    those functions returned to a pipe (the tape). Each check has its own wall-time limit; a check that
//!    runs over, crashes, prints too much or is stopped by the sandbox fails alone, and the run goes on
//!    from the next check.
//! 3. **Judge.** This process — which never loads student code — runs every check again on the recorded
//!    values and decides. The inputs come from a seed drawn afresh for every grading, so no output can be
//!    prepared in advance, and nothing the student's code prints or exits with can set a verdict.
//!
//! In a class, each unit is compiled and probed inside [`sandbox`] (bubblewrap, seccomp, rlimits), so that
//! no student's code can read, name or reach another's. Units whose files are identical (students who
//! handed in the same files, or nothing) are built and probed once.
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::CString;
use std::fs::{self, File};
use std::io::{BufRead, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use super::sandbox::{self, ChildSetup, Limits};
use super::{checks, probe, tape, Exercise, Outcome, Status};

/// One file to grade as one exercise. The label names it in the results ("ada/causal_mask").
#[derive(Debug, Clone)]
pub struct Submission {
    pub label: String,
    pub exercise: &'static Exercise,
    pub file: PathBuf,
}

/// How to grade.
#[derive(Debug, Clone)]
pub struct Options {
    /// Compile and run every unit inside the sandbox (a class). Without it, the limits still apply.
    pub sandbox: bool,
    pub limits: Limits,
    /// The seed the checks' inputs are drawn from; `None` draws one.
    pub seed: Option<i64>,
    /// Units graded at the same time.
    pub jobs: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sandbox: false,
            limits: Limits::default(),
            seed: None,
            jobs: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        }
    }
}

/// The project's root: where `Cargo.toml` and the `grader/` package are.
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn work_dir() -> PathBuf {
    project_root().join("target").join("exercise-grader")
}

/// Grades the submissions as one unit, unsandboxed (a learner's own files, the instructors' tests).
pub fn grade(submissions: &[Submission]) -> Result<Vec<Outcome>> {
    Ok(grade_units(vec![submissions.to_vec()], &Options::default(), &|_| {})?.remove(0))
}

/// Grades every unit; the outcomes come back in the units' and submissions' order. Compile errors, time
/// limits and crashes are outcomes, not errors: an `Err` means the grader itself could not run (no
/// compiler, no LibTorch, no sandbox). `done(n)` is called as units finish, with how many have.
pub fn grade_units(
    units: Vec<Vec<Submission>>,
    options: &Options,
    done: &(dyn Fn(usize) + Sync),
) -> Result<Vec<Vec<Outcome>>> {
    let work = work_dir();
    fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let bwrap = if options.sandbox { Some(sandbox::bwrap()?) } else { None };
    let recipe = Recipe::get(&work)?;
    let seed = options.seed.unwrap_or_else(fresh_seed);
    let run = tempdir_in(&work, "run")?;
    let filters = match bwrap {
        Some(_) => {
            let mut paths = Vec::new();
            for (i, program) in sandbox::seccomp_filters()?.into_iter().enumerate() {
                let path = run.join(format!("seccomp-{i}.bpf"));
                fs::write(&path, program)?;
                paths.push(path);
            }
            paths
        }
        None => Vec::new(),
    };
    // Identical units (the same files under other names) are built and probed once.
    let mut distinct: Vec<usize> = Vec::new();
    let mut same_as: Vec<usize> = Vec::new();
    let mut keys: BTreeMap<Vec<(&'static str, Vec<u8>)>, usize> = BTreeMap::new();
    for unit in &units {
        let key: Vec<(&'static str, Vec<u8>)> =
            unit.iter().map(|s| (s.exercise.name, fs::read(&s.file).unwrap_or_default())).collect();
        let next = distinct.len();
        let index = *keys.entry(key).or_insert(next);
        if index == next {
            distinct.push(same_as.len());
        }
        same_as.push(index);
    }
    let context =
        Context_ { recipe: &recipe, bwrap: bwrap.as_deref(), filters: &filters, limits: options.limits, seed };
    let results: Vec<Mutex<Option<Result<Vec<Outcome>>>>> = distinct.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let copies: Vec<usize> = (0..distinct.len()).map(|d| same_as.iter().filter(|&&i| i == d).count()).collect();
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.max(1).min(distinct.len().max(1)) {
            scope.spawn(|| loop {
                let d = next.fetch_add(1, Ordering::SeqCst);
                if d >= distinct.len() {
                    break;
                }
                let folder = run.join(format!("u{d:03}"));
                let result = grade_unit(&units[distinct[d]], &folder, &context);
                *results[d].lock().expect("not poisoned") = Some(result);
                done(finished.fetch_add(copies[d], Ordering::SeqCst) + copies[d]);
            });
        }
    });
    if std::env::var_os("KEEP_RUN").is_none() {
        let _ = fs::remove_dir_all(&run);
    }
    let mut per_distinct = Vec::new();
    for r in results {
        per_distinct.push(r.into_inner().expect("not poisoned").expect("every unit graded")?);
    }
    // A copy's messages name its own files, never those of the student it was graded with.
    Ok(units
        .iter()
        .zip(&same_as)
        .map(|(unit, &d)| {
            let first = &units[distinct[d]];
            unit.iter()
                .zip(first)
                .zip(&per_distinct[d])
                .map(|((s, f), o)| Outcome {
                    label: s.label.clone(),
                    message: o.message.replace(&f.file.display().to_string(), &s.file.display().to_string()),
                    ..o.clone()
                })
                .collect()
        })
        .collect())
}

/// A seed from the clock and the process: different for every grading run.
fn fresh_seed() -> i64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    ((nanos as i64) ^ ((std::process::id() as i64) << 32)) & 0x7fff_ffff_ffff
}

fn tempdir_in(parent: &Path, prefix: &str) -> Result<PathBuf> {
    for n in 0.. {
        let dir = parent.join(format!("{prefix}-{}-{n}", std::process::id()));
        if fs::create_dir(&dir).is_ok() {
            return Ok(dir);
        }
    }
    unreachable!()
}

struct Context_<'a> {
    recipe: &'a Recipe,
    bwrap: Option<&'a Path>,
    filters: &'a [PathBuf],
    limits: Limits,
    seed: i64,
}

fn outcome(s: &Submission, status: Status, message: String) -> Outcome {
    Outcome { name: s.exercise.name, label: s.label.clone(), status, message, parts: None }
}

/// Builds, probes and judges one unit in `folder`.
fn grade_unit(unit: &[Submission], folder: &Path, cx: &Context_) -> Result<Vec<Outcome>> {
    fs::create_dir_all(folder)?;
    let mut outcomes: Vec<Option<Outcome>> = vec![None; unit.len()];
    let mut remaining: Vec<usize> = Vec::new();
    for (i, s) in unit.iter().enumerate() {
        if s.file.is_file() {
            remaining.push(i);
        } else {
            outcomes[i] = Some(outcome(s, Status::DoesNotCompile, format!("{} is missing", s.file.display())));
        }
    }
    let plan = loop {
        if remaining.is_empty() {
            break None;
        }
        let plan = Plan::write(unit, &remaining, folder)?;
        match compile(cx, folder)? {
            Compiled::Probe => break Some(plan),
            Compiled::Errors(mut errors) => {
                // An error in the student's own file says more than its echo in the plan's call.
                errors.sort_by_key(|e| e.file == "main.rs");
                let mut blamed = BTreeSet::new();
                for e in &errors {
                    for i in plan.blame(e) {
                        if blamed.insert(i) {
                            let s = &unit[i];
                            outcomes[i] = Some(outcome(s, Status::DoesNotCompile, plan.describe(e, s)));
                        }
                    }
                }
                if blamed.is_empty() {
                    // An error in no one file (the linker's, say): every file of this unit shares it.
                    let first = errors.first().map(|e| e.rendered.trim_end()).unwrap_or("no message");
                    for &i in &remaining {
                        outcomes[i] =
                            Some(outcome(&unit[i], Status::DoesNotCompile, format!("does not build: {first}")));
                    }
                    remaining.clear();
                }
                remaining.retain(|i| !blamed.contains(i));
            }
            Compiled::Stopped(why) => {
                for &i in &remaining {
                    outcomes[i] = Some(outcome(&unit[i], Status::DoesNotCompile, why.clone()));
                }
                remaining.clear();
            }
        }
    };
    if let Some(plan) = plan {
        let tapes = probe_all(cx, folder, plan.entries.len())?;
        // One judge at a time: the checks seed LibTorch's one generator.
        static JUDGE: Mutex<()> = Mutex::new(());
        let _turn = JUDGE.lock().unwrap_or_else(|e| e.into_inner());
        for (k, &i) in plan.entries.iter().enumerate() {
            let s = &unit[i];
            let (entries, stopped) = tapes[k].clone();
            let seed = probe::check_seed(cx.seed, s.exercise.name);
            let (status, message) = super::run_check(|| {
                tape::begin_check(seed);
                tape::load_replay(entries, stopped);
                checks::replayed(s.exercise.name)
            });
            let parts = checks::take_parts();
            let mut o = outcome(s, status, tidy(&message, &cx.limits));
            o.parts = parts;
            outcomes[i] = Some(o);
        }
    }
    Ok(outcomes.into_iter().map(|o| o.expect("every submission gets an outcome")).collect())
}

/// A message as the student reads it: memory exhaustion said plainly, and no longer than a screen.
fn tidy(message: &str, limits: &Limits) -> String {
    let mut m = message.to_string();
    if m.contains("can't allocate memory") || m.contains("memory allocation of") {
        m = format!("ran out of its {} of memory ({})", limits.memory_words(), m.lines().next().unwrap_or_default());
    }
    if m.chars().count() > 2000 {
        m = m.chars().take(2000).collect::<String>() + " …";
    }
    m
}

/// The generated `main.rs` of a unit, and which submissions its modules and lines belong to.
struct Plan {
    /// The probe's checks, in order: the submission each one grades.
    entries: Vec<usize>,
    /// Line number (1-based) of each check call in main.rs → submission.
    lines: BTreeMap<usize, usize>,
    /// Module file (`f003.rs`) → the submissions graded from it, and the file it is a copy of.
    files: BTreeMap<String, (Vec<usize>, PathBuf)>,
}

impl Plan {
    fn write(unit: &[Submission], chosen: &[usize], folder: &Path) -> Result<Self> {
        let mut source = String::from("// Written by transformer_anatomy::exercises::grading for one grading.\n");
        source += "#![allow(unused_variables, dead_code, unused_imports, unused_mut)]\n";
        let mut files: BTreeMap<String, (Vec<usize>, PathBuf)> = BTreeMap::new();
        let mut by_text: BTreeMap<Vec<u8>, String> = BTreeMap::new();
        let mut module_of = BTreeMap::new();
        for &i in chosen {
            let text = fs::read(&unit[i].file).with_context(|| format!("cannot read {}", unit[i].file.display()))?;
            let next = format!("f{:03}", by_text.len());
            let module = by_text.entry(text.clone()).or_insert_with(|| next.clone()).clone();
            if module == next {
                fs::write(folder.join(format!("{module}.rs")), &text)?;
                source += &format!("#[path = \"{module}.rs\"]\nmod {module};\n");
            }
            files.entry(format!("{module}.rs")).or_insert_with(|| (Vec::new(), unit[i].file.clone())).0.push(i);
            module_of.insert(i, module);
        }
        source += "fn main() {\n    use transformer_anatomy::exercises::{checks, tape::record};\n";
        source += "    transformer_anatomy::exercises::probe::main(&[\n";
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
        Ok(Plan { entries: chosen.to_vec(), lines, files })
    }

    /// The submissions a compiler error belongs to: those of its file, or the one of its line of main.rs.
    fn blame(&self, e: &CompilerError) -> Vec<usize> {
        if let Some((owners, _)) = self.files.get(&e.file) {
            return owners.clone();
        }
        if e.file == "main.rs" {
            return self.lines.get(&e.line).copied().into_iter().collect();
        }
        Vec::new()
    }

    fn describe(&self, e: &CompilerError, s: &Submission) -> String {
        if e.file == "main.rs" {
            let first = e.rendered.lines().next().unwrap_or_default();
            let names: Vec<&str> = s.exercise.functions.iter().map(|(f, _)| *f).collect();
            return format!(
                "{}: the functions {} no longer have the stub's names or types ({first}); `anatomy exercises reset \
                 {}` puts the stub back",
                s.file.display(),
                names.join(", "),
                s.exercise.name
            );
        }
        // The message, its `--> file:line:col` and the source lines, naming the student's own file.
        let mut text = e.rendered.trim_end().to_string();
        for (module, (_, original)) in &self.files {
            text = text.replace(&format!("{module}:"), &format!("{}:", original.display()));
        }
        text
    }
}

/// How to call `rustc` for a probe, read off one build of the `anatomy-grader` package by cargo.
#[derive(Debug)]
struct Recipe {
    rustc: PathBuf,
    sysroot: PathBuf,
    /// The built libraries (hard links to cargo's), the only ones a probe can link with.
    libs: PathBuf,
    externs: Vec<(String, PathBuf)>,
    native: Vec<PathBuf>,
    libtorch_lib: PathBuf,
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

impl Recipe {
    /// Builds `anatomy-grader` (a program with no student code) and reads what it was linked from.
    fn get(work: &Path) -> Result<Recipe> {
        static BUILD: Mutex<()> = Mutex::new(());
        let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
        let lock = File::create(work.join(".lock"))?;
        lock.lock().context("cannot lock target/exercise-grader/.lock")?;
        let plan = work.join("recipe.rs");
        let text = "fn main() { println!(\"{}\", transformer_anatomy::exercises::EXERCISES.len()); }\n";
        if fs::read_to_string(&plan).ok().as_deref() != Some(text) {
            fs::write(&plan, text)?;
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let root = project_root();
        let output = Command::new(&cargo)
            .args(["build", "--quiet", "--package", "anatomy-grader", "--message-format=json"])
            .arg("--manifest-path")
            .arg(root.join("Cargo.toml"))
            .env("ANATOMY_GRADER_PLAN", &plan)
            .output()
            .with_context(|| format!("cannot run {cargo:?} to build the grader: is Rust installed?"))?;
        let (mut externs, mut native, mut artifacts) = (Vec::new(), Vec::new(), Vec::new());
        for line in output.stdout.lines() {
            let Ok(m) = serde_json::from_str::<CargoMessage>(&line?) else { continue };
            match m.reason.as_str() {
                "compiler-artifact" => {
                    let name = m.target.map(|t| t.name).unwrap_or_default();
                    if name == "anatomy-grader" || name == "build-script-build" {
                        continue;
                    }
                    for f in m.filenames {
                        if name == "transformer_anatomy" || name == "tch" {
                            if f.extension().is_some_and(|x| x == "rlib") {
                                externs.push((name.clone(), f.clone()));
                            }
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
        if !output.status.success() || externs.len() != 2 {
            let stderr = String::from_utf8_lossy(&output.stderr);
            bail!(
                "building the exercise grader failed: {}",
                stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("cargo gave no reason")
            );
        }
        // A folder holding the built libraries and nothing else (no earlier probe, no student's file), named
        // after what it holds: a grading running at the same time may be compiling against an older one.
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
        let externs = externs.into_iter().map(|(n, f)| (n, libs.join(f.file_name().expect("a file")))).collect();
        let rustc = std::env::var_os("RUSTC").map(PathBuf::from).unwrap_or_else(|| "rustc".into());
        let sysroot = Command::new(&rustc).args(["--print", "sysroot"]).output().context("cannot run rustc")?;
        let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
        let libtorch_lib = PathBuf::from(option_env!("ANATOMY_LIBTORCH_LIB").unwrap_or_default());
        Ok(Recipe { rustc: sysroot.join("bin").join("rustc"), sysroot, libs, externs, native, libtorch_lib })
    }

    /// The folders a probe needs at run time: LibTorch's (with the CUDA stubs beside it).
    fn runtime_dirs(&self) -> Vec<PathBuf> {
        // .deps/libtorch/torch/lib → .deps/libtorch (libtorch_cpu finds ../../nvidia/… from its folder).
        let top = self.libtorch_lib.parent().and_then(Path::parent).unwrap_or(&self.libtorch_lib);
        vec![top.to_path_buf()]
    }
}

/// A compiler error, as rustc's JSON diagnostics give it.
#[derive(Debug)]
struct CompilerError {
    file: String,
    line: usize,
    rendered: String,
}

enum Compiled {
    Probe,
    Errors(Vec<CompilerError>),
    /// The compiler ran past its time limit (a macro or constant that never ends).
    Stopped(String),
}

const COMPILE_TIME: Duration = Duration::from_secs(120);

/// Compiles `folder/main.rs` into `folder/probe`.
fn compile(cx: &Context_, folder: &Path) -> Result<Compiled> {
    let r = cx.recipe;
    let mut args: Vec<String> = vec![
        "--edition=2021".into(),
        "--crate-type=bin".into(),
        "--crate-name=probe".into(),
        "--error-format=json".into(),
        "-Cdebuginfo=0".into(),
        "-Cstrip=debuginfo".into(),
        "-Awarnings".into(),
        "-o".into(),
        "probe".into(),
        "-L".into(),
        format!("dependency={}", r.libs.display()),
    ];
    for (name, file) in &r.externs {
        args.extend(["--extern".into(), format!("{name}={}", file.display())]);
    }
    for p in &r.native {
        args.extend(["-L".into(), format!("native={}", p.display())]);
    }
    args.push(format!("-Clink-arg=-Wl,-rpath,{}", r.libtorch_lib.display()));
    args.push("main.rs".into());
    let mut command = match cx.bwrap {
        Some(bwrap) => {
            let mut readable = vec![r.sysroot.clone(), r.libs.clone()];
            readable.extend(r.native.iter().cloned());
            readable.extend(r.runtime_dirs());
            sandbox::compile_command(bwrap, folder, &readable, &r.rustc)
        }
        None => {
            let mut c = Command::new(&r.rustc);
            c.current_dir(folder);
            c
        }
    };
    command.args(&args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    ChildSetup { memory: 8 << 30, cpu_seconds: 300, file_size: 1 << 30, open_at: vec![], dup_to: vec![] }
        .apply(&mut command);
    command.process_group(0);
    let mut child = command.spawn().with_context(|| format!("cannot run {}", r.rustc.display()))?;
    let stderr = read_in_background(child.stderr.take().expect("piped"), 4 << 20);
    let status = wait_or_kill(&mut child, COMPILE_TIME)?;
    let (text, _) = stderr.join().unwrap_or_default();
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
    let Some(status) = status else {
        return Ok(Compiled::Stopped(format!("compiling took more than {} s and was stopped", COMPILE_TIME.as_secs())));
    };
    if !errors.is_empty() {
        return Ok(Compiled::Errors(errors));
    }
    if !status.success() || !folder.join("probe").is_file() {
        bail!("compiling the probe failed ({status}): {}", text.lines().last().unwrap_or("no message"));
    }
    Ok(Compiled::Probe)
}

/// One probe run's findings for each check: the recorded entries and, when the check did not finish, why.
type Tapes = Vec<(Vec<tape::Entry>, Option<String>)>;

/// Runs the probe until every check has finished or been stopped.
fn probe_all(cx: &Context_, folder: &Path, count: usize) -> Result<Tapes> {
    let mut tapes: Tapes = vec![(Vec::new(), None); count];
    let mut from = 0;
    while from < count {
        let ended = probe_once(cx, folder, from, &mut tapes)?;
        // `ended`: the check that was stopped (it fails with the reason), or None when all finished.
        match ended {
            None => break,
            Some((k, why)) => {
                tapes[k].1 = Some(why);
                from = k + 1;
            }
        }
    }
    Ok(tapes)
}

enum Event {
    Frame(tape::Frame),
    TapeClosed,
    Flood,
}

/// One run of the probe from check `from`. Fills in the tapes of the checks that ran; returns the check
/// that did not finish and why, or `None` when every check from `from` on finished.
fn probe_once(cx: &Context_, folder: &Path, from: usize, tapes: &mut Tapes) -> Result<Option<(usize, String)>> {
    let probe_path = folder.join("probe");
    let (read_end, write_end) = pipe()?;
    let mut command = match cx.bwrap {
        Some(bwrap) => {
            let fds: Vec<i32> = (0..cx.filters.len() as i32).map(|i| 10 + i).collect();
            let mut c = sandbox::run_command(bwrap, folder, &cx.recipe.runtime_dirs(), &probe_path, &fds);
            c.args(["--seed", &cx.seed.to_string(), "--from", &from.to_string()]);
            c
        }
        None => {
            let mut c = Command::new(&probe_path);
            c.current_dir(folder).args(["--seed", &cx.seed.to_string(), "--from", &from.to_string()]);
            c
        }
    };
    // Nothing of the grader's environment: the sandbox clears it too (--clearenv) and sets its own.
    command.env_clear().env("OMP_NUM_THREADS", "1").env("LD_LIBRARY_PATH", &cx.recipe.libtorch_lib);
    let open_at = cx
        .filters
        .iter()
        .enumerate()
        .map(|(i, p)| (CString::new(p.display().to_string()).expect("no NUL"), 10 + i as i32))
        .collect();
    let remaining = (tapes.len() - from) as u64;
    ChildSetup {
        memory: cx.limits.memory,
        cpu_seconds: cx.limits.time_per_check.as_secs() * remaining + 10,
        file_size: 64 << 20,
        open_at,
        dup_to: vec![(write_end.as_raw_fd(), tape::FD)],
    }
    .apply(&mut command);
    command.process_group(0).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().with_context(|| format!("cannot start {}", probe_path.display()))?;
    drop(write_end);

    let (tx, events) = mpsc::channel::<Event>();
    let printed = std::sync::Arc::new(AtomicUsize::new(0));
    let limit = cx.limits.output as usize;
    let watch_output = |pipe: Box<dyn Read + Send>, keep: bool| {
        let (tx, printed) = (tx.clone(), printed.clone());
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut reader = pipe;
            let mut buffer = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                if keep {
                    kept.extend_from_slice(&buffer[..n]);
                    if kept.len() > 16384 {
                        kept.drain(..kept.len() - 16384);
                    }
                }
                if printed.fetch_add(n, Ordering::SeqCst) + n > limit {
                    let _ = tx.send(Event::Flood);
                    // Keep draining, so that the child is never blocked on a full pipe.
                }
            }
            String::from_utf8_lossy(&kept).into_owned()
        })
    };
    let out_thread = watch_output(Box::new(child.stdout.take().expect("piped")), false);
    let err_thread = watch_output(Box::new(child.stderr.take().expect("piped")), true);
    {
        let tx = tx.clone();
        let mut reader = File::from(read_end);
        std::thread::spawn(move || {
            let mut head = [0u8; 5];
            loop {
                if reader.read_exact(&mut head).is_err() {
                    break;
                }
                let len = u32::from_le_bytes(head[1..5].try_into().expect("4 bytes")) as usize;
                if len > tape::MAX_FRAME {
                    break;
                }
                let mut payload = vec![0u8; len];
                if reader.read_exact(&mut payload).is_err() {
                    break;
                }
                if tx.send(Event::Frame(tape::Frame { tag: head[0], payload })).is_err() {
                    break;
                }
            }
            // Drain whatever else comes, without keeping it.
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
            let _ = tx.send(Event::TapeClosed);
        });
    }
    drop(tx);

    let mut current: Option<usize> = None; // the check running now
    let mut expected = from; // the START we wait for
    let mut started = Instant::now();
    let mut stop: Option<String> = None;
    let mut syscall: Option<u32> = None;
    let mut recorded_bytes = 0usize;
    let mut tape_closed = false;
    while !tape_closed {
        let left = cx.limits.time_per_check.saturating_sub(started.elapsed());
        match events.recv_timeout(left) {
            Ok(Event::Frame(f)) => match f.tag {
                tape::START if tape::number(&f.payload) == Some(expected as u32) && expected < tapes.len() => {
                    current = Some(expected);
                    tapes[expected].0.clear();
                    expected += 1;
                    started = Instant::now();
                }
                tape::DONE if current.is_some() && tape::number(&f.payload) == current.map(|c| c as u32) => {
                    current = None;
                    started = Instant::now();
                }
                tape::OUTPUT | tape::PANIC if current.is_some() => {
                    recorded_bytes += f.payload.len();
                    if recorded_bytes > 64 << 20 {
                        stop = Some("returned more data than any check asks for (over 64 MiB)".into());
                        break;
                    }
                    let entry = if f.tag == tape::OUTPUT {
                        tape::Entry::Output(f.payload)
                    } else {
                        tape::Entry::Panic(String::from_utf8_lossy(&f.payload).chars().take(4000).collect())
                    };
                    tapes[current.expect("checked")].0.push(entry);
                }
                tape::SYSCALL => syscall = tape::number(&f.payload),
                _ => {}
            },
            Ok(Event::TapeClosed) => tape_closed = true,
            Ok(Event::Flood) => {
                stop = Some(format!(
                    "printed more than {} KiB (stdout and stderr together) and was stopped: print less",
                    cx.limits.output >> 10
                ));
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                stop = Some(format!("timed out after {} s (an endless loop?)", cx.limits.time_per_check.as_secs()));
                break;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    if stop.is_some() {
        kill_group(&mut child);
    }
    let status = wait_or_kill(&mut child, Duration::from_secs(5))?;
    let stderr = err_thread.join().unwrap_or_default();
    let _ = out_thread.join();
    let all_done = current.is_none() && expected == tapes.len();
    if all_done && stop.is_none() {
        return Ok(None);
    }
    let why = stop.unwrap_or_else(|| {
        if let Some(nr) = syscall {
            return tape::forbidden_call_words(nr);
        }
        died(status, &stderr, &cx.limits)
    });
    // The check that was running, or the first that never started.
    Ok(Some((current.unwrap_or(expected.min(tapes.len() - 1)), why)))
}

/// Why a probe that stopped on its own stopped, in words.
fn died(status: Option<std::process::ExitStatus>, stderr: &str, limits: &Limits) -> String {
    let last =
        stderr.lines().rev().find(|l| !l.trim().is_empty()).map(|l| l.trim().chars().take(300).collect::<String>());
    let Some(status) = status else { return "did not stop when asked".into() };
    if stderr.contains("has overflowed its stack") {
        return "overflowed its stack (endless recursion?)".into();
    }
    if stderr.contains("memory allocation of") {
        return format!("ran out of its {} of memory", limits.memory_words());
    }
    // Under bubblewrap the probe is not our child: its death by signal N arrives as exit status 128 + N.
    let signal = status.signal().or_else(|| status.code().filter(|c| (129..160).contains(c)).map(|c| c - 128));
    match signal {
        // Trapped with signals blocked (as the C library does while starting a process): killed outright.
        Some(libc::SIGSYS) => "tried to start a process or made another system call the sandbox forbids, and was \
                               stopped"
            .into(),
        Some(libc::SIGXCPU) => "used up its CPU time and was stopped".into(),
        Some(libc::SIGABRT) => format!("aborted{}", last.map(|l| format!(": {l}")).unwrap_or_default()),
        Some(libc::SIGSEGV) => "crashed (segmentation fault)".into(),
        Some(n) => format!("was killed by signal {n}"),
        None => format!(
            "exited (status {}) in the middle of the check{}",
            status.code().unwrap_or(-1),
            last.map(|l| format!("; it printed: {l}")).unwrap_or_default()
        ),
    }
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        bail!("cannot create a pipe: {}", std::io::Error::last_os_error());
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn kill_group(child: &mut Child) {
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGKILL);
    }
    let _ = child.kill();
}

/// Reads a child's output to its end on another thread (keeping at most `keep` bytes), so that a full pipe
/// never blocks the child.
fn read_in_background(mut pipe: impl Read + Send + 'static, keep: usize) -> std::thread::JoinHandle<(String, usize)> {
    std::thread::spawn(move || {
        let mut text = Vec::new();
        let mut total = 0;
        let mut buffer = [0u8; 8192];
        while let Ok(n) = pipe.read(&mut buffer) {
            if n == 0 {
                break;
            }
            total += n;
            if text.len() < keep {
                text.extend_from_slice(&buffer[..n.min(keep - text.len())]);
            }
        }
        (String::from_utf8_lossy(&text).into_owned(), total)
    })
}

/// The exit status, or `None` when the limit passed and the process (group) was killed.
fn wait_or_kill(child: &mut Child, limit: Duration) -> Result<Option<std::process::ExitStatus>> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if started.elapsed() > limit {
            kill_group(child);
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A file holding the untouched stub of an exercise, for a student who did not hand that exercise in
/// (under `target/exercise-grader/stubs/`; every such student shares it).
pub fn stub_file(e: &Exercise) -> Result<PathBuf> {
    let folder = work_dir().join("stubs");
    fs::create_dir_all(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
    let file = folder.join(format!("{}.rs", e.name));
    if fs::read_to_string(&file).ok().as_deref() != Some(e.stub) {
        // Whole or not at all: another grading may be reading it.
        let partial = folder.join(format!("{}.{}.partial", e.name, std::process::id()));
        fs::write(&partial, e.stub).with_context(|| format!("cannot write {}", partial.display()))?;
        fs::rename(&partial, &file).with_context(|| format!("cannot write {}", file.display()))?;
    }
    Ok(file)
}

/// One submission per exercise, labelled by the exercise's name, from the file `file_of` names.
pub fn by_name(chosen: &[&'static Exercise], file_of: impl Fn(&Exercise) -> PathBuf) -> Vec<Submission> {
    chosen.iter().map(|&e| Submission { label: e.name.to_string(), exercise: e, file: file_of(e) }).collect()
}
