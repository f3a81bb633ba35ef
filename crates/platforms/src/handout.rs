//! The students' copy of the course (`make handout DIR=… [CLASSROOM=1]`, which runs `anatomy exercises
//! handout DIR [--classroom]`): every file git tracks less what instructors keep back
//! (`exercises/kept-back`: the solutions, their own tests, the fuzzing), written into `DIR.partial-PID`,
//! built on its own and checked, then renamed into `DIR`. With `--classroom` it is a GitHub Classroom
//! template (`exercises/platforms/github-classroom.md`).
//!
//! The copy is built in `target/handout-build/` of this project, whose dependencies start as hard links to
//! this project's build ([`link_dependencies`], which the recipe's test uses too), so that a second handout
//! reuses them. It must compile nothing when built a second time (`scripts/fresh-build.sh`, which
//! `make test` runs on this project too), list every exercise its own table declares as "not done", keep
//! the solutions closed, and hold the released homework notebook (`anatomy notebooks release`, run by the
//! copy's own binary). Nothing is written when `DIR` exists; the partial folder is removed on any failure
//! and when the handout is stopped (SIGINT, SIGTERM, SIGHUP), and every failure is one line that says what
//! to fix.
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use anatomy_course::kept_back::{self, KeptBack};
use anyhow::{bail, Context, Result};

use anatomy_course::project_root;
use anatomy_grade::grading::Scratch;

/// Writes the students' copy into `dir`, telling `say` each step; returns the line it ends with.
pub fn write(dir: &Path, classroom: bool, say: &mut dyn FnMut(&str)) -> Result<String> {
    if dir.as_os_str().is_empty() {
        bail!("usage: make handout DIR=new-folder (the students' copy is written there)");
    }
    if dir.symlink_metadata().is_ok() {
        bail!("{} already exists: name a new folder, so that nothing of yours is overwritten", dir.display());
    }
    let root = project_root();
    if !root.join("solutions").is_dir() {
        bail!("{} has no solutions/: hand out from the instructors' checkout, not a students' copy", root.display());
    }
    // Removed on a failure, and when `make handout` is stopped (Ctrl+C) while it builds.
    let partial = beside(dir, "partial");
    let count = copy_tracked(&root, partial.path())?;
    say(&format!("copied {count} files; kept back solutions/ and the instructors' tests"));
    let copy = Copy { target: root.join("target/handout-build"), dir: partial.path().to_path_buf(), root };
    say("building the copy on its own (its dependencies start from this project's build)");
    copy.build()?;
    say("built; building it again must compile nothing");
    copy.builds_fresh()?;
    let declared = copy.starts_from_nothing_done()?;
    copy.release()?;
    say("the homework notebook is the released one (cargo anatomy notebooks release)");
    if classroom {
        copy.classroom()?;
        say("GitHub Classroom: .github/workflows/classroom.yml grades every push; the stubs are the students' files");
    }
    std::fs::rename(partial.path(), dir).with_context(|| format!("cannot rename the copy into {}", dir.display()))?;
    partial.keep();
    Ok(format!(
        "the students' copy is in {}: it builds, lists all {declared} exercises as not done and keeps the solutions back",
        dir.display()
    ))
}

/// Copies the files git tracks at `root`, less the kept-back ones, into `into` (modes and times kept, as
/// `cp -p` does); returns how many.
fn copy_tracked(root: &Path, into: &Path) -> Result<usize> {
    let kept = KeptBack::read(root).with_context(|| format!("cannot read {}: restore it from git", kept_back::FILE))?;
    let listed = Command::new("git").arg("-C").arg(root).args(["ls-files", "-z"]).output();
    let listed = match listed {
        Ok(o) if o.status.success() => o.stdout,
        _ => bail!("git ls-files fails in {}: install git; the handout copies the files git tracks", root.display()),
    };
    let mut count = 0;
    for name in listed.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name);
        let (from, to) = (root.join(&*name), into.join(&*name));
        if kept.holds(&name) || !from.exists() {
            continue;
        }
        let copied = std::fs::create_dir_all(to.parent().unwrap_or(into)).and_then(|()| {
            std::fs::copy(&from, &to)?;
            std::fs::File::options().write(true).open(&to)?.set_modified(std::fs::metadata(&from)?.modified()?)
        });
        copied.with_context(|| format!("cannot copy {name} into {}: free some disk space", into.display()))?;
        count += 1;
    }
    Ok(count)
}

/// The copy being checked: its folder, this project's root and the copy's target folder.
struct Copy {
    root: PathBuf,
    dir: PathBuf,
    target: PathBuf,
}

impl Copy {
    /// `program` in the copy, with this project's LibTorch and model and the copy's own target folder.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.current_dir(&self.dir)
            .env("LIBTORCH", self.root.join(".deps/libtorch/torch"))
            .env("ANATOMY_DEFAULT_MODEL_DIR", self.root.join("models/all-MiniLM-L6-v2"))
            .env("CARGO_TARGET_DIR", &self.target);
        c
    }

    fn cargo(&self) -> Command {
        self.command(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
    }

    /// The copy's own `anatomy`, as built by [`Copy::build`].
    fn anatomy(&self) -> Command {
        self.command(self.target.join("debug/anatomy"))
    }

    /// As the grader builds it: every package (`--workspace`), the grader's recipe with them.
    fn build(&self) -> Result<()> {
        link_dependencies(&self.root.join("target/debug"), &self.target.join("debug"));
        if !self.cargo().args(["build", "--quiet", "--workspace"]).status().is_ok_and(|s| s.success()) {
            bail!("the students' copy does not build (cargo's errors above): fix them in this project first");
        }
        Ok(())
    }

    /// A second build must compile nothing: `scripts/fresh-build.sh` says what it compiled again.
    fn builds_fresh(&self) -> Result<()> {
        let fresh = self.command(self.root.join("scripts/fresh-build.sh")).arg(&self.dir).status();
        if !fresh.is_ok_and(|s| s.success()) {
            bail!("a second cargo build of the students' copy compiled again (above): a build script watches a path the copy lacks");
        }
        Ok(())
    }

    /// The README's own `cargo anatomy exercises list` lists every exercise the copy's table declares as
    /// "not done", from "0 of N done", and the solution command is refused; returns N.
    fn starts_from_nothing_done(&self) -> Result<usize> {
        let scratch = Scratch::new(std::env::temp_dir().join(format!("anatomy-handout-{}", std::process::id())));
        std::fs::create_dir_all(scratch.path()).context("cannot make a scratch folder: free some disk space")?;
        let run = |c: &mut Command| c.env("ANATOMY_EXERCISES_DIR", scratch.path()).output();
        let list = match run(self.cargo().args(["anatomy", "exercises", "list"])) {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
            o => bail!("cargo anatomy exercises list fails in the students' copy: {}", first_line(o)),
        };
        let table = run(self.anatomy().args(["exercises", "table"]))
            .context("cannot run target/handout-build/debug/anatomy: remove target/handout-build and hand out again")?;
        // As many as the declaration holds: the rows of the copy's own table of exercises.
        let declared = String::from_utf8_lossy(&table.stdout).lines().count().saturating_sub(2);
        let not_done = list.lines().filter(|l| l.contains(" not done ")).count();
        if declared == 0 || not_done != declared {
            bail!("expected the {declared} declared exercises listed as not done in the students' copy, got {not_done}: each stub (crates/course/src/stubs/) must be todo!()");
        }
        if !list.lines().any(|l| l.starts_with(&format!("0 of {declared} done"))) {
            bail!("the copy's list does not start from 0 of {declared} done: its progress must start empty");
        }
        match run(self.anatomy().args(["exercises", "solution", "cross_attention"])) {
            Ok(o) if o.status.success() => {
                bail!("the students' copy shows a solution: list solutions/ in exercises/kept-back")
            }
            Ok(o) if String::from_utf8_lossy(&o.stderr).contains("no solutions/ folder") => Ok(declared),
            o => bail!("the copy's solution command says: {}", first_line(o)),
        }
    }

    /// The homework notebooks and their chapters released: solution cut to `todo!()`, with nbgrader's
    /// metadata and checksums, by the copy's own binary; none may still hold a solution.
    fn release(&self) -> Result<()> {
        let mut release = self.anatomy();
        release.args(["notebooks", "release", "--in-place", "--root"]).arg(&self.dir).stdout(Stdio::null());
        if !release.status().is_ok_and(|s| s.success()) {
            bail!("cargo anatomy notebooks release fails in the students' copy (above): run it here to see why");
        }
        for (folder, extension) in [("chapters", "md"), ("notebooks", "ipynb")] {
            for entry in std::fs::read_dir(self.dir.join(folder)).into_iter().flatten().flatten() {
                let path = entry.path();
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                if path.extension().is_some_and(|e| e == extension) && text.contains("BEGIN SOLUTION") {
                    bail!(
                        "{folder}/{} of the students' copy still holds a solution: mark it for nbgrader's release",
                        entry.file_name().to_string_lossy()
                    );
                }
            }
        }
        Ok(())
    }

    /// A GitHub Classroom template: the grading workflow, and the stubs committed as the students' files
    /// (their pushes carry them), so `exercises/*.rs` is no longer ignored.
    fn classroom(&self) -> Result<()> {
        let workflows = self.dir.join(".github/workflows");
        std::fs::create_dir_all(&workflows)
            .and_then(|()| {
                std::fs::copy(self.root.join("exercises/platforms/classroom.yml"), workflows.join("classroom.yml"))
            })
            .context("cannot copy exercises/platforms/classroom.yml into the copy: restore it from git")?;
        let mut stubs = self.anatomy();
        stubs
            .args(["exercises", "list"])
            .env("ANATOMY_EXERCISES_DIR", self.dir.join("exercises"))
            .stdout(Stdio::null());
        if !stubs.status().is_ok_and(|s| s.success()) {
            bail!("the copy's cargo anatomy exercises list could not write the stubs (above): run it there to see why");
        }
        let _ = std::fs::remove_file(self.dir.join("exercises/.progress.json"));
        let ignore = std::fs::read_to_string(self.root.join(".gitignore"))
            .context("cannot read .gitignore: restore it from git")?;
        let kept: String = ignore.lines().filter(|l| *l != "/exercises/*.rs").map(|l| format!("{l}\n")).collect();
        std::fs::write(self.dir.join(".gitignore"), kept)
            .context("cannot write the copy's .gitignore: free some disk space")
    }
}

/// The first line a command said on stderr, or why it did not run.
fn first_line(o: std::io::Result<Output>) -> String {
    match o {
        Ok(o) => String::from_utf8_lossy(&o.stderr).lines().next().unwrap_or("nothing").to_string(),
        Err(e) => e.to_string(),
    }
}

/// Starts the target folder `target` (a profile's, like `target/debug`) from hard links to what is built in
/// `built`: its `deps` (libraries and build outputs only: this project's test binaries carry their own
/// names), `build` and `.fingerprint`, so that cargo finds the dependencies fresh and compiles only the
/// workspace's own packages. Those are never linked: cargo gives a package the same hash wherever it
/// lives, and their files would be written over in place. Nothing is done when `target` exists or nothing
/// is built; what cannot be linked (a file removed meanwhile) is left for cargo to build.
pub fn link_dependencies(built: &Path, target: &Path) {
    if target.exists() || !built.join("deps").is_dir() {
        return;
    }
    // Linked beside `target` and renamed into place once whole: stopped halfway (Ctrl+C), it leaves no
    // half-linked `target`, which the next handout would take as linked and compile from scratch (a test
    // that stopped a handout while it linked made the next one take 650 s instead of 86).
    let linking = beside(target, "linking");
    // Made once; every folder below only with create_dir, so that once a signal has removed the folder,
    // nothing here makes it again while the process ends.
    let _ = std::fs::create_dir_all(linking.path());
    for part in ["deps", "build", ".fingerprint"] {
        let _ = std::fs::create_dir(linking.path().join(part));
        for entry in std::fs::read_dir(built.join(part)).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_own(&name) || (part == "deps" && !name.starts_with("lib")) {
                continue;
            }
            let _ = link_tree(&entry.path(), &linking.path().join(part).join(&name));
        }
    }
    // Another handout may have linked it meanwhile: then ours is dropped (and removed).
    if std::fs::rename(linking.path(), target).is_ok() {
        linking.keep();
    }
}

/// A scratch folder beside `path` to be renamed into it once whole: `PATH.WHAT-PID`.
fn beside(path: &Path, what: &str) -> Scratch {
    let mut name: OsString = path.as_os_str().to_owned();
    name.push(format!(".{what}-{}", std::process::id()));
    Scratch::new(PathBuf::from(name))
}

/// `cp -al`: `to` made as `from`, each file a hard link to the same bytes.
fn link_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let kind = from.symlink_metadata()?.file_type();
    if kind.is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
    } else if kind.is_dir() {
        std::fs::create_dir(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            let _ = link_tree(&entry.path(), &to.join(entry.file_name()));
        }
        Ok(())
    } else {
        std::fs::hard_link(from, to)
    }
}

/// Whether a name in a target folder is one of this workspace's crates: every one is named
/// `transformer-anatomy` or `anatomy-<stage>`, so its files match `^(lib)?(transformer[-_])?anatomy([-_][a-z]+)*-`.
fn is_own(name: &str) -> bool {
    let name = name.strip_prefix("lib").unwrap_or(name);
    let name = ["transformer-", "transformer_"].iter().find_map(|p| name.strip_prefix(p)).unwrap_or(name);
    let Some(mut rest) = name.strip_prefix("anatomy") else { return false };
    // `([-_][a-z]+)*-`: a `-` ends it; an `_` must start a word of letters, after which the same holds.
    loop {
        if rest.starts_with('-') {
            return true;
        }
        let Some(word) = rest.strip_prefix('_') else { return false };
        let letters = word.len() - word.trim_start_matches(|c: char| c.is_ascii_lowercase()).len();
        if letters == 0 {
            return false;
        }
        rest = &word[letters..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_s_own_crates_are_told_from_their_dependencies_by_name() {
        for own in [
            "libanatomy_cli-1a2b.rlib",
            "anatomy-cli-1a2b",
            "libtransformer_anatomy-0f.rmeta",
            "transformer-anatomy-0f",
            "anatomy_checks-9.d",
        ] {
            assert!(is_own(own), "{own}");
        }
        for dependency in
            ["libanyhow-1a.rlib", "anatomy", "libanatomy.rlib", "anatomy_9-x", "transformers-1", "anatomical-1"]
        {
            assert!(!is_own(dependency), "{dependency}");
        }
    }

    #[test]
    fn the_dependencies_are_linked_once_and_never_the_workspace_s_own() {
        let scratch =
            Scratch::new(std::env::temp_dir().join(format!("anatomy-platforms-links-{}", std::process::id())));
        let (built, target) = (scratch.path().join("built"), scratch.path().join("target"));
        for file in [
            "deps/libserde-1.rlib",
            "deps/serde-1.d",
            "deps/libanatomy_grade-2.rlib",
            "build/tch-3/out/x",
            ".fingerprint/anatomy-cli-4/f",
        ] {
            std::fs::create_dir_all(built.join(file).parent().unwrap()).unwrap();
            std::fs::write(built.join(file), file).unwrap();
        }
        link_dependencies(&built, &target);
        assert!(target.join("deps/libserde-1.rlib").is_file() && target.join("build/tch-3/out/x").is_file());
        for left in ["deps/serde-1.d", "deps/libanatomy_grade-2.rlib", ".fingerprint/anatomy-cli-4"] {
            assert!(!target.join(left).exists(), "{left}");
        }
        std::fs::write(built.join("deps/libtch-5.rlib"), "").unwrap();
        link_dependencies(&built, &target);
        assert!(!target.join("deps/libtch-5.rlib").exists(), "a target folder that exists is left as it is");
    }
}
