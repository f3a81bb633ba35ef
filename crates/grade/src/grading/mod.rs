//! Compiling exercise files, running them, and deciding their grades — in three separate steps.
//!
//! 1. **Build.** The files of one *unit* — one student's files in a class, or a learner's own files — are
//!    copied into a scratch folder of their own, beside a generated `main.rs` (one module per file, one
//!    check call per file, the functions wrapped in [`tape::record`]), and compiled with `rustc` against
//!    the already built library. A file the compiler blames is reported with its first error and left out
//!    of the next build, so every other file is still graded.
//! 2. **Probe.** The program runs each check in a process of its own, forked for that check alone, which
//!    writes nothing but what the student's functions returned, by value, to a pipe of that check's own
//!    (the tape). A student's code for one exercise so never shares a process, a channel or a random
//!    generator with another exercise's check. Each check has its own wall-time, output and memory limits;
//!    a check that runs over, crashes, prints too much or is stopped by the sandbox fails alone, and the
//!    run goes on from the next check.
//! 3. **Judge.** This process — which never loads student code — runs every check again on the recorded
//!    values and decides, comparing each answer's shape and kind with the reference before its values.
//!    Each check's inputs come from a seed of its own, drawn afresh for every grading (one check's seed
//!    tells nothing of another's), so no output can be prepared in advance, and nothing the student's
//!    code prints or exits with can set a verdict.
//!
//! In a class, each unit is compiled and probed inside [`sandbox`] (bubblewrap, seccomp, rlimits), so that
//! no student's code can read, name or reach another's. Units whose files are identical (students who
//! handed in the same files, or nothing) are built and probed once.
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{Context, Result};

use anatomy_checks::{checks, mistakes, tape};
use anatomy_course::{project_root, Exercise, Outcome, Status};
use anatomy_intake::rules::{self, Verdict};

use crate::handin;
use crate::sandbox::{self, Limits, Tier};

mod build;
mod cleanup;
mod run;

use build::{compile, Compiled, Plan, Recipe};
pub use cleanup::{stop_and_exit, Scratch};

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
    /// The sandbox every unit is compiled and run in ([`sandbox::choose`] for a class); with
    /// `Tier::None` (a learner's own files), the limits still apply.
    pub tier: Tier,
    pub limits: Limits,
    /// The seed the checks' inputs are drawn from; `None` draws one.
    pub seed: Option<i64>,
    /// Units graded at the same time.
    pub jobs: usize,
    /// Whether each outcome keeps what its code printed ([`Outcome::output`]): a learner grading their own
    /// files reads it; a class's prints are never kept, sandboxed or not.
    pub show_output: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tier: Tier::None,
            limits: Limits::default(),
            seed: None,
            jobs: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            show_output: false,
        }
    }
}

fn work_dir() -> PathBuf {
    project_root().join("target").join("exercise-grader")
}

/// Grades the submissions as one unit, unsandboxed (a learner's own files, the instructors' tests), each
/// outcome with what its code printed.
pub fn grade(submissions: &[Submission]) -> Result<Vec<Outcome>> {
    let options = Options { show_output: true, ..Options::default() };
    Ok(grade_units(vec![submissions.to_vec()], &options, &|_| {})?.all()?.remove(0))
}

/// A class's grades: each unit's outcomes, and the grader's own failure if one stopped the class.
pub struct Graded {
    /// Per unit, in the units' order: its outcomes, or `None` when the grader failed before grading it.
    pub units: Vec<Option<Vec<Outcome>>>,
    /// What stopped the grader itself (a full disk, say) — never something a student's file did. The
    /// units graded before it keep their outcomes, so that nothing already graded is lost.
    pub failure: Option<anyhow::Error>,
    /// The run's seed: each check's inputs are drawn from it and the exercise's name ([`check_seed`]).
    pub seed: i64,
    /// The grader that graded: its version and the build of the libraries a probe links (the folder
    /// they were copied to is named by their hash).
    pub grader: String,
    /// Per unit, the bytes graded for each submission (or why the file was refused), as read once.
    pub sources: Vec<Vec<Source>>,
}

impl Graded {
    /// Every unit's outcomes, or the grader's failure.
    pub fn all(self) -> Result<Vec<Vec<Outcome>>> {
        match self.failure {
            Some(e) => Err(e),
            None => Ok(self.units.into_iter().map(|u| u.expect("graded when nothing failed")).collect()),
        }
    }
}

/// Grades every unit; the outcomes come back in the units' and submissions' order. Compile errors,
/// compile-time bombs, time limits and crashes are outcomes, not errors, and each stays with the file
/// that caused it. An `Err` means the grader could not start (no compiler, no LibTorch, no sandbox); a
/// failure of its own on the way ([`Graded::failure`]) keeps what was graded before it. `done(n)` is
/// called as units finish, with how many have.
pub fn grade_units(units: Vec<Vec<Submission>>, options: &Options, done: &(dyn Fn(usize) + Sync)) -> Result<Graded> {
    let work = work_dir();
    fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let recipe = Recipe::get(&work)?;
    let seed = options.seed.unwrap_or_else(fresh_seed);
    let run = Scratch::new(tempdir_in(&work, "run")?);
    // The seccomp programs, which the probe enters in each check's process.
    let programs = match options.tier {
        Tier::None => Vec::new(),
        _ => sandbox::seccomp_filters()?,
    };
    // Every file is read once, here, with no link followed: only these bytes are graded.
    let sources: Vec<Vec<Source>> =
        units.iter().map(|u| u.iter().map(|s| handin::read_code(&s.file, s.exercise)).collect()).collect();
    let same = Distinct::of(&units, &sources);
    let (tier, limits, show_output) = (&options.tier, options.limits, options.show_output);
    let context = Setup { recipe: &recipe, tier, programs: &programs, limits, seed, show_output };
    let results = same.grade(&units, &sources, run.path(), &context, options.jobs, done);
    drop(run);
    let mut failure = None;
    let mut per_distinct = Vec::new();
    for r in results {
        per_distinct.push(match r {
            Some(Ok(outcomes)) => Some(outcomes),
            Some(Err(e)) => {
                failure.get_or_insert(e);
                None
            }
            None => None,
        });
    }
    // A copy's messages name its own files, never those of the student it was graded with.
    let units = units
        .iter()
        .zip(&same.same_as)
        .map(|(unit, &d)| {
            let first = &units[same.distinct[d]];
            let graded = per_distinct[d].as_ref()?;
            Some(
                unit.iter()
                    .zip(first)
                    .zip(graded)
                    .map(|((s, f), o)| Outcome {
                        label: s.label.clone(),
                        message: o.message.replace(&f.file.display().to_string(), &s.file.display().to_string()),
                        ..o.clone()
                    })
                    .collect(),
            )
        })
        .collect();
    let grader = format!(
        "anatomy {} ({})",
        env!("CARGO_PKG_VERSION"),
        recipe.libs.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    );
    Ok(Graded { units, failure, seed, grader, sources })
}

/// Identical units (the same files under other names) are built and probed once: `distinct` holds the
/// first unit of each kind, `same_as` each unit's kind.
struct Distinct {
    distinct: Vec<usize>,
    same_as: Vec<usize>,
}

impl Distinct {
    fn of(units: &[Vec<Submission>], sources: &[Vec<Source>]) -> Distinct {
        let (mut distinct, mut same_as) = (Vec::new(), Vec::new());
        let mut keys: BTreeMap<Vec<(&'static str, &Source)>, usize> = BTreeMap::new();
        for (unit, source) in units.iter().zip(sources) {
            let key: Vec<(&'static str, &Source)> = unit.iter().map(|s| s.exercise.name).zip(source).collect();
            let next = distinct.len();
            let index = *keys.entry(key).or_insert(next);
            if index == next {
                distinct.push(same_as.len());
            }
            same_as.push(index);
        }
        Distinct { distinct, same_as }
    }

    /// Grades each kind once, `jobs` at a time, each in a folder of its own under `run`; `None` for the
    /// kinds not started after the grader itself failed.
    fn grade(
        &self,
        units: &[Vec<Submission>],
        sources: &[Vec<Source>],
        run: &Path,
        context: &Setup,
        jobs: usize,
        done: &(dyn Fn(usize) + Sync),
    ) -> Vec<Option<Result<Vec<Outcome>>>> {
        let results: Vec<Mutex<Option<Result<Vec<Outcome>>>>> =
            self.distinct.iter().map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        // Set when the grader itself fails: no new unit starts, the ones under way finish.
        let failed = std::sync::atomic::AtomicBool::new(false);
        let finished = AtomicUsize::new(0);
        let copies: Vec<usize> =
            (0..self.distinct.len()).map(|d| self.same_as.iter().filter(|&&i| i == d).count()).collect();
        std::thread::scope(|scope| {
            for _ in 0..jobs.max(1).min(self.distinct.len().max(1)) {
                scope.spawn(|| loop {
                    let d = next.fetch_add(1, Ordering::SeqCst);
                    if d >= self.distinct.len() || failed.load(Ordering::SeqCst) {
                        break;
                    }
                    let folder = run.join(format!("u{d:03}"));
                    let first = self.distinct[d];
                    let result = grade_unit(&units[first], &sources[first], &folder, context);
                    if result.is_err() {
                        failed.store(true, Ordering::SeqCst);
                    }
                    // Its copies and its probe are no longer needed: the class's disk holds two units at a time.
                    let _ = fs::remove_dir_all(&folder);
                    *results[d].lock().expect("not poisoned") = Some(result);
                    done(finished.fetch_add(copies[d], Ordering::SeqCst) + copies[d]);
                });
            }
        });
        results.into_iter().map(|r| r.into_inner().expect("not poisoned")).collect()
    }
}

/// A seed from the clock and the process: different for every grading run.
fn fresh_seed() -> i64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    ((nanos as i64) ^ ((std::process::id() as i64) << 32)) & 0x7fff_ffff_ffff
}

/// A new folder `PREFIX-PID-N` in `parent`.
pub(super) fn tempdir_in(parent: &Path, prefix: &str) -> Result<PathBuf> {
    for n in 0.. {
        let dir = parent.join(format!("{prefix}-{}-{n}", std::process::id()));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", dir.display())),
        }
    }
    unreachable!("one of infinitely many names is free")
}

pub(super) struct Setup<'a> {
    recipe: &'a Recipe,
    tier: &'a Tier,
    /// The seccomp programs, as bytes, for each check's process.
    programs: &'a [Vec<u8>],
    limits: Limits,
    seed: i64,
    show_output: bool,
}

fn outcome(s: &Submission, status: Status, message: String) -> Outcome {
    Outcome { name: s.exercise.name, label: s.label.clone(), status, message, parts: None, mistake: None, output: None }
}

/// An outcome that did not pass, with the id of what went wrong.
fn failed(s: &Submission, status: Status, message: String, mistake: &str) -> Outcome {
    Outcome { mistake: Some(mistake.to_string()), ..outcome(s, status, message) }
}

/// A handed-in file's bytes, or why it was refused (see [`handin::read`]).
pub type Source = std::result::Result<Vec<u8>, String>;

/// Builds, probes and judges one unit in `folder`. Before anything is compiled, each file must be a
/// regular file and keep its exercise's rules ([`rules`]).
fn grade_unit(unit: &[Submission], sources: &[Source], folder: &Path, cx: &Setup) -> Result<Vec<Outcome>> {
    fs::create_dir_all(folder)?;
    let mut unit_state = Unit::read(unit, sources);
    if let Some(plan) = unit_state.build(unit, sources, folder, cx)? {
        let seeds: Vec<i64> = plan.entries.iter().map(|&i| check_seed(cx.seed, unit[i].exercise.name)).collect();
        let records = run::probe_all(cx, folder, &seeds)?;
        // One judge at a time: the checks seed LibTorch's one generator.
        static JUDGE: Mutex<()> = Mutex::new(());
        let _turn = JUDGE.lock().unwrap_or_else(|e| e.into_inner());
        // A learner grading their own files reads what their code printed; a class's prints stay unread.
        for ((&i, record), &seed) in plan.entries.iter().zip(records).zip(&seeds) {
            let mut outcome = judge(&unit[i], record, seed, &cx.limits, cx.show_output);
            outcome.message = plan.student_lines(&outcome.message);
            unit_state.outcomes[i] = Some(outcome);
        }
    }
    Ok(unit_state.outcomes.into_iter().map(|o| o.expect("every submission gets an outcome")).collect())
}

/// One unit on its way through the grader: the outcomes decided so far, the files still to build, and
/// the files the parser could not read (graded by the compiler's message, refused if the compiler
/// accepts them).
struct Unit {
    outcomes: Vec<Option<Outcome>>,
    remaining: Vec<usize>,
    unreadable: BTreeMap<usize, String>,
}

impl Unit {
    /// Each file's bytes read as UTF-8 and held to its exercise's rules.
    fn read(unit: &[Submission], sources: &[Source]) -> Unit {
        let mut state = Unit { outcomes: vec![None; unit.len()], remaining: Vec::new(), unreadable: BTreeMap::new() };
        for (i, (s, source)) in unit.iter().zip(sources).enumerate() {
            let shown = s.file.display();
            let text = match source {
                Err(why) => {
                    state.outcomes[i] = Some(failed(s, Status::Failed, why.clone(), "refused_hand_in"));
                    continue;
                }
                Ok(bytes) => match std::str::from_utf8(bytes) {
                    Ok(text) => text,
                    Err(_) => {
                        let why = format!("{shown} is not UTF-8 text: save it as UTF-8");
                        state.outcomes[i] = Some(failed(s, Status::DoesNotCompile, why, "not_utf8"));
                        continue;
                    }
                },
            };
            match rules::check(text, s.exercise.uses, s.exercise.forbids) {
                Verdict::Allowed => state.remaining.push(i),
                Verdict::Refused(r) => {
                    state.outcomes[i] = Some(failed(
                        s,
                        Status::Failed,
                        format!("{shown}:{}: {}", r.line, r.message),
                        "refused_by_rules",
                    ));
                }
                Verdict::Beyond(r) => {
                    let why = format!("{shown}:{}: {}", r.line, r.message);
                    state.outcomes[i] = Some(failed(s, Status::Failed, why, "beyond_reading_limits"));
                }
                Verdict::Unreadable(r) => {
                    state.unreadable.insert(i, format!("{shown}:{}: {}", r.line, r.message));
                    state.remaining.push(i);
                }
            }
        }
        state
    }

    /// Builds what the rules allowed; files the compiler blames fail alone and the rest are built again.
    /// The plan of the build that succeeded, or `None` when no file is left to probe.
    fn build(&mut self, unit: &[Submission], sources: &[Source], folder: &Path, cx: &Setup) -> Result<Option<Plan>> {
        // Once per unit: a build that fails without naming a file is split into one build per file.
        let mut isolated = false;
        loop {
            if self.remaining.is_empty() {
                return Ok(None);
            }
            let plan = Plan::write(unit, sources, &self.remaining, folder)?;
            let why = match compile(cx, folder, &plan.crates)? {
                Compiled::Probe => {
                    // The compiler read what the parser could not: refused, since the rules could not be checked.
                    let unchecked: Vec<usize> =
                        self.remaining.iter().copied().filter(|i| self.unreadable.contains_key(i)).collect();
                    if unchecked.is_empty() {
                        return Ok(Some(plan));
                    }
                    for i in unchecked {
                        let why = self.unreadable.remove(&i).expect("listed");
                        self.outcomes[i] = Some(failed(&unit[i], Status::Failed, why, "refused_by_rules"));
                        self.remaining.retain(|&j| j != i);
                    }
                    continue;
                }
                Compiled::Errors(mut errors) => {
                    // An error in the student's own file says more than its echo in the plan's call.
                    errors.sort_by_key(|e| e.file == "main.rs");
                    let mut blamed = BTreeSet::new();
                    for e in &errors {
                        for i in plan.blame(e) {
                            if blamed.insert(i) {
                                let s = &unit[i];
                                self.outcomes[i] =
                                    Some(failed(s, Status::DoesNotCompile, plan.describe(e, s), "does_not_compile"));
                            }
                        }
                    }
                    if !blamed.is_empty() {
                        self.remaining.retain(|i| !blamed.contains(i));
                        continue;
                    }
                    // An error in no one file (the linker's, say).
                    let first = errors.first().map(|e| e.rendered.trim_end()).unwrap_or("no message");
                    (format!("does not build: {first}"), "does_not_compile")
                }
                Compiled::Stopped(why) => (why, "compile_limit"),
            };
            let (why, stop_id) = (why.0, why.1.to_string());
            // Nothing named a file: one file stopped the compiler (a limit, a crash). Each file is compiled on
            // its own, and only those that fail alone fail; the others are built together again.
            let alone = !isolated && self.remaining.len() > 1;
            let failed_alone =
                if alone { build::isolate(unit, sources, &self.remaining, folder, cx)? } else { BTreeMap::new() };
            isolated |= alone;
            if failed_alone.is_empty() {
                // One file, or files that each build alone but not together: they share the reason.
                let why = if alone { format!("{why} (each file builds on its own, but not together)") } else { why };
                for &i in &self.remaining {
                    self.outcomes[i] = Some(failed(&unit[i], Status::DoesNotCompile, why.clone(), &stop_id));
                }
                self.remaining.clear();
            }
            for (i, why) in failed_alone {
                self.outcomes[i] = Some(failed(&unit[i], Status::DoesNotCompile, why, &stop_id));
                self.remaining.retain(|&j| j != i);
            }
        }
    }
}

/// The verdict on one check, from its record alone: the judge runs the check again on the recorded
/// answers. A check that failed while its `/tmp` was full (the probe's parent saw it) says so, with the
/// limit's id; a check the grader stopped keeps the id it was stopped with.
fn judge(s: &Submission, record: run::Record, seed: i64, limits: &sandbox::Limits, own: bool) -> Outcome {
    let run::Record { entries, stop, tmp_full, printed, panic_at } = record;
    let checked = anatomy_checks::run_check(|| {
        tape::begin_check(seed);
        tape::load_replay(entries, stop.as_ref().map(|stop| stop.why.clone()));
        checks::replayed(s.exercise.name)
    });
    let parts = checks::take_parts();
    let failed = matches!(checked.status, Status::Failed | Status::DoesNotCompile);
    let (message, id) = match (&stop, failed) {
        (_, false) => (checked.message, None),
        // Stopped by the grader: its words and its id, whatever the record held before the stop.
        (Some(stop), true) => (stop.why.clone(), Some(stop.id)),
        (None, true) if tmp_full => (run::disk_full(&checked.message, limits), Some(mistakes::DISK_LIMIT)),
        (None, true) => (checked.message, Some(checked.mistake.map(|m| m.0).unwrap_or(mistakes::UNNAMED))),
    };
    // A panic of the student's code says where; a limit's stop or a check's own verdict does not need it.
    let message = match (&panic_at, &stop) {
        (Some(at), None) if checked.status == Status::Failed => format!("{message} ({})", at.words()),
        _ => message,
    };
    let mut o = outcome(s, checked.status, shortened(message));
    o.parts = parts;
    o.mistake = id.map(str::to_string);
    if own {
        o.output = anatomy_intake::printed::shown(&printed.kept, printed.total);
    }
    o
}

/// A message no longer than a screen.
fn shortened(message: String) -> String {
    if message.chars().count() > 2000 {
        message.chars().take(2000).collect::<String>() + " …"
    } else {
        message
    }
}

/// The seed of one check: from the run's seed and the exercise, through MD5, so that one check's seed —
/// which its process holds — tells nothing of another's, nor of the run's.
pub fn check_seed(run_seed: i64, exercise: &str) -> i64 {
    use md5::{Digest, Md5};
    let digest = Md5::new().chain_update(run_seed.to_le_bytes()).chain_update(exercise.as_bytes()).finalize();
    i64::from_le_bytes(digest[..8].try_into().expect("8 bytes")) & 0x7fff_ffff_ffff_ffff
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

/// A student's submissions: for each chosen exercise, the file [`handin::find`] finds in the student's
/// folder, or the untouched stub where there is none. Labelled `WHO/NAME` (a class) or `NAME` (one
/// submission).
pub fn student_unit(folder: &Path, who: Option<&str>, chosen: &[&'static Exercise]) -> Result<Vec<Submission>> {
    hand_in_unit(&handin::HandIn::Folder(folder.to_path_buf()), who, chosen)
}

/// A student's submissions from what they handed in, a folder or a download's files, as [`student_unit`].
pub fn hand_in_unit(
    hand_in: &handin::HandIn,
    who: Option<&str>,
    chosen: &[&'static Exercise],
) -> Result<Vec<Submission>> {
    let mut unit = Vec::new();
    for &e in chosen {
        let file = match hand_in.find(e.name) {
            Some(f) => f,
            None => stub_file(e)?,
        };
        let label = who.map(|w| format!("{w}/{}", e.name)).unwrap_or_else(|| e.name.to_string());
        unit.push(Submission { label, exercise: e, file });
    }
    Ok(unit)
}

/// One submission per exercise, labelled by the exercise's name, from the file `file_of` names.
pub fn by_name(chosen: &[&'static Exercise], file_of: impl Fn(&Exercise) -> PathBuf) -> Vec<Submission> {
    chosen.iter().map(|&e| Submission { label: e.name.to_string(), exercise: e, file: file_of(e) }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(student: &str, names: &[&str]) -> Vec<Submission> {
        names
            .iter()
            .map(|n| Submission {
                label: format!("{student}/{n}"),
                exercise: anatomy_course::find(n).unwrap(),
                file: PathBuf::from(format!("{student}/{n}.rs")),
            })
            .collect()
    }

    #[test]
    fn identical_hand_ins_are_graded_once_and_each_student_keeps_their_place() {
        let units = vec![
            unit("ada", &["layer_norm", "causal_mask"]),
            unit("bob", &["layer_norm", "causal_mask"]),
            unit("cy", &["layer_norm", "causal_mask"]),
            unit("di", &["causal_mask", "layer_norm"]),
        ];
        let code = |a: &[u8], b: &[u8]| vec![Ok(a.to_vec()), Ok(b.to_vec())];
        let sources = vec![
            code(b"fn a() {}", b"fn b() {}"),
            code(b"fn a() {}", b"fn c() {}"),
            code(b"fn a() {}", b"fn b() {}"),
            // The same bytes for other exercises are another unit.
            code(b"fn b() {}", b"fn a() {}"),
        ];
        let same = Distinct::of(&units, &sources);
        assert_eq!(same.distinct, [0, 1, 3], "the first student of each kind is the one graded");
        assert_eq!(same.same_as, [0, 1, 0, 2]);
        // A refused file is part of what a unit is: the same refusal is the same unit, another is not.
        let refused = vec![
            vec![Err("a link".to_string()), Ok(b"x".to_vec())],
            vec![Err("a link".into()), Ok(b"x".to_vec())],
            vec![Err("a fifo".into()), Ok(b"x".to_vec())],
        ];
        let units = vec![
            unit("a", &["layer_norm", "causal_mask"]),
            unit("b", &["layer_norm", "causal_mask"]),
            unit("c", &["layer_norm", "causal_mask"]),
        ];
        assert_eq!(Distinct::of(&units, &refused).same_as, [0, 0, 1]);
    }

    #[test]
    fn each_exercise_draws_from_a_seed_of_its_own_that_only_the_run_decides() {
        let seeds: BTreeSet<i64> = anatomy_course::EXERCISES.iter().map(|e| check_seed(7, e.name)).collect();
        assert_eq!(seeds.len(), anatomy_course::EXERCISES.len(), "no two exercises share inputs");
        assert!(seeds.iter().all(|&s| s >= 0));
        assert_eq!(check_seed(7, "layer_norm"), check_seed(7, "layer_norm"), "the judge draws what the probe drew");
        assert_ne!(check_seed(7, "layer_norm"), check_seed(8, "layer_norm"), "another run, other inputs");
    }
}
