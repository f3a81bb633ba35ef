//! Compiling and running exercise files, each on its own.
//!
//! The library never compiles a student's file. To grade, we write a *plan* — one Rust module per file
//! to grade (`#[path = "…"] mod m3;`) and one line that hands that module's functions to its check —
//! and build the small `anatomy-grader` package around it. The library is already built, so only the
//! plan compiles: one `rustc` for a whole class. A file that does not compile is recognised from the
//! compiler's own JSON messages, reported with its first error, and left out of the next build, so
//! every other file is still graded. The binary then runs each check in turn and prints one JSON line
//! per file; if it dies (a LibTorch abort, an endless loop), the files it had not reported are run again
//! one at a time, so that only the guilty one fails.
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use super::{Exercise, Outcome, Status};

/// One file to grade as one exercise. The label names it in the results ("ada/causal_mask").
#[derive(Debug, Clone)]
pub struct Submission {
    pub label: String,
    pub exercise: &'static Exercise,
    pub file: PathBuf,
}

/// How long one run of the checks may take before it is stopped.
const TIME_PER_CHECK: Duration = Duration::from_secs(30);

/// The project's root: where `Cargo.toml` and the `grader/` package are.
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Grades every submission; the outcomes come back in the submissions' order. Compile errors are
/// outcomes (`Status::DoesNotCompile`), not errors: an `Err` means the grader itself could not run
/// (no cargo, no LibTorch).
pub fn grade(submissions: &[Submission]) -> Result<Vec<Outcome>> {
    let root = project_root();
    let work = root.join("target").join("exercise-grader");
    fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    // One grader at a time per project: the binary is shared.
    let lock = File::create(work.join(".lock"))?;
    lock.lock().context("cannot lock target/exercise-grader/.lock")?;

    let mut outcomes: Vec<Option<Outcome>> = vec![None; submissions.len()];
    let mut remaining: Vec<usize> = Vec::new();
    for (i, s) in submissions.iter().enumerate() {
        if s.file.is_file() {
            remaining.push(i);
        } else {
            outcomes[i] = Some(outcome(s, Status::DoesNotCompile, format!("{} is missing", s.file.display())));
        }
    }
    // Build; leave out the files the compiler blames; build again, until what is left compiles.
    let binary = loop {
        if remaining.is_empty() {
            break None;
        }
        let plan = Plan::new(submissions, &remaining)?;
        let plan_file = work.join("plan.rs");
        write_if_changed(&plan_file, &plan.source)?;
        match build(&root, &plan_file)? {
            Build::Binary(path) => break Some(path),
            Build::Errors(mut errors) => {
                // An error in the student's own file says more than its echo in the plan's call.
                errors.sort_by_key(|e| e.file.ends_with("plan.rs"));
                let mut blamed = BTreeSet::new();
                for e in &errors {
                    for i in plan.blame(e) {
                        if blamed.insert(i) {
                            let s = &submissions[i];
                            outcomes[i] = Some(outcome(s, Status::DoesNotCompile, e.describe(s)));
                        }
                    }
                }
                if blamed.is_empty() {
                    let first = errors.first().map(|e| e.rendered.as_str()).unwrap_or("no message");
                    bail!("the grader does not build, and not because of an exercise file:\n{first}");
                }
                remaining.retain(|i| !blamed.contains(i));
            }
        }
    };
    if let Some(binary) = binary {
        // Run the checks; what a crashed run did not report is run again one file at a time.
        let labels: Vec<String> = remaining.iter().map(|&i| submissions[i].label.clone()).collect();
        let mut first = run(&binary, &labels, TIME_PER_CHECK * labels.len() as u32)?;
        for &i in &remaining {
            let s = &submissions[i];
            let result = match first.reported.remove(&s.label) {
                Some(o) => o,
                None => {
                    let mut alone = run(&binary, std::slice::from_ref(&s.label), TIME_PER_CHECK)?;
                    match alone.reported.remove(&s.label) {
                        Some(o) => o,
                        None => {
                            let why = alone.stopped.or(first.stopped.clone()).unwrap_or_else(|| "no report".into());
                            (Status::Failed, format!("the check did not finish: {why}"))
                        }
                    }
                }
            };
            outcomes[i] = Some(outcome(s, result.0, result.1));
        }
    }
    Ok(outcomes.into_iter().map(|o| o.expect("every submission gets an outcome")).collect())
}

fn outcome(s: &Submission, status: Status, message: String) -> Outcome {
    Outcome { name: s.exercise.name, label: s.label.clone(), status, message }
}

/// The plan's source, and which of its lines and files belong to which submissions.
struct Plan {
    source: String,
    /// Line number (1-based) of each submission's check call → submission index.
    lines: BTreeMap<usize, usize>,
    /// Canonical file path → the submissions graded from it. A file several submissions share (the
    /// untouched stub, in a class) is compiled once, as one module.
    files: BTreeMap<PathBuf, Vec<usize>>,
}

impl Plan {
    fn new(submissions: &[Submission], chosen: &[usize]) -> Result<Self> {
        let mut source =
            String::from("// Written by transformer_anatomy::exercises::grading; rewritten at every grading.\n");
        let mut files: BTreeMap<PathBuf, Vec<usize>> = BTreeMap::new();
        let mut modules: BTreeMap<PathBuf, usize> = BTreeMap::new(); // file → module number
        let mut module_of = BTreeMap::new(); // submission index → module number
        for &i in chosen {
            let file =
                submissions[i].file.canonicalize().with_context(|| format!("{}", submissions[i].file.display()))?;
            let next = modules.len();
            let module = *modules.entry(file.clone()).or_insert_with(|| {
                source += &format!("#[path = {:?}]\nmod m{next};\n", file.display().to_string());
                next
            });
            module_of.insert(i, module);
            files.entry(file).or_default().push(i);
        }
        source += "fn main() {\n    use transformer_anatomy::exercises::checks;\n    transformer_anatomy::exercises::serve(&[\n";
        let mut lines = BTreeMap::new();
        for &i in chosen {
            let s = &submissions[i];
            let module = module_of[&i];
            let arguments: Vec<String> = s.exercise.functions.iter().map(|f| format!("m{module}::{f}")).collect();
            lines.insert(source.lines().count() + 1, i);
            source += &format!(
                "        ({:?}, (|| checks::{}({})) as fn() -> checks::CheckResult),\n",
                s.label,
                s.exercise.name,
                arguments.join(", ")
            );
        }
        source += "    ]);\n}\n";
        Ok(Plan { source, lines, files })
    }

    /// The submissions a compiler error belongs to: those of its file, or the one of its line of the plan.
    fn blame(&self, e: &CompilerError) -> Vec<usize> {
        let file = Path::new(&e.file);
        if let Some(owners) = file.canonicalize().ok().and_then(|f| self.files.get(&f)) {
            return owners.clone();
        }
        if file.ends_with("plan.rs") {
            return self.lines.get(&e.line).copied().into_iter().collect();
        }
        Vec::new()
    }
}

/// A compiler error, as cargo's JSON messages give it.
#[derive(Debug)]
struct CompilerError {
    file: String,
    line: usize,
    rendered: String,
}

impl CompilerError {
    fn describe(&self, s: &Submission) -> String {
        let rendered = &self.rendered;
        if self.file.ends_with("plan.rs") {
            let first = rendered.lines().next().unwrap_or_default();
            format!(
                "{}: the functions {} no longer have the stub's names or types ({first}); \
                 `anatomy exercises reset {}` puts the stub back",
                s.file.display(),
                s.exercise.functions.join(", "),
                s.exercise.name
            )
        } else {
            // The message, its `--> file:line:col` and the source lines it points at.
            rendered.trim_end().to_string()
        }
    }
}

enum Build {
    Binary(PathBuf),
    Errors(Vec<CompilerError>),
}

#[derive(Deserialize)]
struct CargoMessage {
    reason: String,
    #[serde(default)]
    message: Option<RustcMessage>,
    #[serde(default)]
    executable: Option<PathBuf>,
    #[serde(default)]
    target: Option<CargoTarget>,
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

fn build(root: &Path, plan_file: &Path) -> Result<Build> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut child = Command::new(&cargo)
        .args(["build", "--quiet", "--package", "anatomy-grader", "--message-format=json"])
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .env("ANATOMY_GRADER_PLAN", plan_file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {:?} to build the exercises: is Rust installed?", cargo))?;
    let stderr_reader = read_in_background(child.stderr.take().expect("piped"));
    let (mut binary, mut errors) = (None, Vec::new());
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let Ok(message) = serde_json::from_str::<CargoMessage>(&line?) else { continue };
        match (message.reason.as_str(), message.message) {
            ("compiler-artifact", _) if message.target.is_some_and(|t| t.name == "anatomy-grader") => {
                binary = message.executable.or(binary);
            }
            ("compiler-message", Some(m)) if m.level == "error" => {
                let span = m.spans.iter().find(|s| s.is_primary).or(m.spans.first());
                errors.push(CompilerError {
                    file: span.map(|s| s.file_name.clone()).unwrap_or_default(),
                    line: span.map(|s| s.line_start).unwrap_or(0),
                    rendered: m.rendered.unwrap_or_default(),
                });
            }
            _ => {}
        }
    }
    let status = child.wait()?;
    let stderr = stderr_reader.join().unwrap_or_default();
    if !errors.is_empty() {
        return Ok(Build::Errors(errors));
    }
    match binary {
        Some(path) if status.success() => Ok(Build::Binary(path)),
        _ => bail!(
            "building the exercise grader failed: {}",
            stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("cargo gave no reason")
        ),
    }
}

/// What one run of the grader binary reported, by label, and why it stopped early if it did.
struct Run {
    reported: BTreeMap<String, (Status, String)>,
    stopped: Option<String>,
}

/// Runs the grader binary on these labels.
fn run(binary: &Path, labels: &[String], limit: Duration) -> Result<Run> {
    let mut command = Command::new(binary);
    // The grader is not the root package, so it has no rpath to LibTorch: hand it the same folder.
    if let Some(lib) = option_env!("ANATOMY_LIBTORCH_LIB") {
        let old = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
        command.env("LD_LIBRARY_PATH", if old.is_empty() { lib.to_string() } else { format!("{lib}:{old}") });
    }
    let mut child = command
        .args(labels)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let stdout = child.stdout.take().expect("piped");
    let errors = read_in_background(child.stderr.take().expect("piped"));
    let reader = std::thread::spawn(move || {
        let mut found = BTreeMap::new();
        for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
            if let Ok(r) = serde_json::from_str::<super::Reported>(&line) {
                found.insert(r.label, (r.status, r.message));
            }
        }
        found
    });
    let finished = wait_or_kill(&mut child, limit)?;
    let reported = reader.join().unwrap_or_default();
    let stderr = errors.join().unwrap_or_default();
    let stopped = match finished {
        None => Some(format!("stopped after {} s (an endless loop?)", limit.as_secs())),
        Some(status) if !status.success() => Some(format!(
            "the check's process died ({status}){}",
            stderr.lines().rev().find(|l| !l.trim().is_empty()).map(|l| format!(": {}", l.trim())).unwrap_or_default()
        )),
        Some(_) => None,
    };
    Ok(Run { reported, stopped })
}

/// Reads a child's output to its end on another thread, so that a full pipe never blocks the child.
fn read_in_background(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

/// The exit status, or `None` when the limit passed and the process was killed.
fn wait_or_kill(child: &mut Child, limit: Duration) -> Result<Option<std::process::ExitStatus>> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if started.elapsed() > limit {
            child.kill().ok();
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A file holding the untouched stub of an exercise, for a student who did not hand that exercise in
/// (under `target/exercise-grader/stubs/`; every such student shares it).
pub fn stub_file(e: &Exercise) -> Result<PathBuf> {
    let folder = project_root().join("target").join("exercise-grader").join("stubs");
    fs::create_dir_all(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
    let file = folder.join(format!("{}.rs", e.name));
    write_if_changed(&file, e.stub)?;
    Ok(file)
}

/// One submission per exercise, labelled by the exercise's name, from the file `file_of` names.
pub fn by_name(chosen: &[&'static Exercise], file_of: impl Fn(&Exercise) -> PathBuf) -> Vec<Submission> {
    chosen.iter().map(|&e| Submission { label: e.name.to_string(), exercise: e, file: file_of(e) }).collect()
}

/// Writes only when the text changed, so that cargo sees an unchanged plan as unchanged.
fn write_if_changed(path: &Path, text: &str) -> Result<()> {
    if fs::read_to_string(path).ok().as_deref() != Some(text) {
        fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
