//! The sandbox a class's code is compiled and run in.
//!
//! Three things the platform offers, each doing one job:
//! - **bubblewrap** (`bwrap`, Debian's package, installed by the set-up) gives each compiler run and each
//!   probe run a private view of the file system — only the toolchain or the libraries it needs, read-only,
//!   and the student's own scratch folder — and new network, PID, IPC, UTS and user namespaces: no network
//!   at all, no other process to see, nothing of the class folder, `solutions/` or the instructor's home.
//! - **seccomp** (filters compiled with `seccompiler`, handed to the probe, which enters them in each
//!   check's process, never its own parent, which must fork) stops a check's code from starting a process
//!   (fork, vfork, clone without CLONE_THREAD), opening any socket, or tracing another process: the call is
//!   answered with SIGSYS, which ends the process (its parent sees the signal).
//! - **setrlimit** caps memory (address space), CPU time, the size of files written and open files; the
//!   grader itself kills a check that runs past its wall-time limit or prints past the output limit.
//! - **one capped place to write**: the probe sees its scratch folder read-only and writes only to a
//!   private `/tmp`, a tmpfs of [`Limits::disk`] bytes (256 MiB); `/dev` is read-only, and shared memory
//!   (`memfd_create`, System V and POSIX) is refused by seccomp. A tmpfs lives in memory and an address-space
//!   limit does not count it, so without the cap one student could fill the grader's memory and disk.
//!
//! Where bubblewrap is missing or cannot make namespaces (a container with Docker's default seccomp
//! profile, as Gradescope's, PrairieLearn's and GitHub's runners are), the grader falls back on its own to
//! the [`landlock`] tier — Landlock, the same seccomp programs and limits, no root — and names the tier it
//! used in every output ([`Tier`]).
//!
//! A learner grading their own files (`check`, `watch`) runs without it: the limits apply, the sandbox
//! does not.
use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use seccompiler::{SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule};

pub mod landlock;

/// How a class's code is kept apart: the strongest tier the machine offers, or none (`--no-sandbox`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tier {
    /// bubblewrap's namespaces, seccomp and limits (the program found).
    Bubblewrap(PathBuf),
    /// Landlock (the kernel's ABI version), seccomp, limits and `nobody`: where namespaces are refused.
    Landlock(u32),
    /// No sandbox: trusted code only.
    None,
}

impl Tier {
    /// A tier from its name, as an output kept it (all an output keeps: the program and ABI are not).
    pub fn named(name: &str) -> Tier {
        match name {
            "bubblewrap" => Tier::Bubblewrap("bwrap".into()),
            "landlock" => Tier::Landlock(0),
            _ => Tier::None,
        }
    }

    /// The tier's name, as every output gives it: "bubblewrap", "landlock", "none".
    pub fn name(&self) -> &'static str {
        match self {
            Tier::Bubblewrap(_) => "bubblewrap",
            Tier::Landlock(_) => "landlock",
            Tier::None => "none",
        }
    }

    /// A line for people: what the tier is.
    pub fn words(&self) -> String {
        match self {
            Tier::Bubblewrap(_) => "bubblewrap (namespaces, seccomp, limits)".into(),
            Tier::Landlock(abi) => format!(
                "landlock (ABI {abi}), seccomp and limits{}: bubblewrap cannot make namespaces here",
                if landlock::running_as_root() {
                    ", students as nobody (or, where the course's folder is closed to others, as root without any \
                     capability)"
                } else {
                    ""
                }
            ),
            Tier::None => "no sandbox (--no-sandbox: the students' code ran with the grader's rights)".into(),
        }
    }
}

/// Which tier an instructor asks for (`--sandbox NAME`, each variant's line its help there): the strongest
/// the machine offers, or one by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SandboxChoice {
    /// bubblewrap where it can make namespaces, else Landlock
    Auto,
    /// bubblewrap only (refuse where it cannot make namespaces)
    Bubblewrap,
    /// Landlock, seccomp and limits, even where bubblewrap would work
    Landlock,
}

/// The tier to grade in: with `SandboxChoice::Auto` the strongest this machine offers (bubblewrap where it can
/// make namespaces, else Landlock); else the one asked for. When none can be had, a one-line error that
/// names the reasons and the way out.
pub fn choose(wanted: SandboxChoice) -> Result<Tier> {
    let landlock = || {
        landlock::abi().map(Tier::Landlock).ok_or_else(|| {
            anyhow::anyhow!(
                "this kernel offers no Landlock (Linux 5.13 or later, with landlock among its LSMs) for the fallback \
                 sandbox"
            )
        })
    };
    match wanted {
        SandboxChoice::Bubblewrap => bwrap().map(Tier::Bubblewrap),
        SandboxChoice::Landlock => landlock().map_err(|e| {
            anyhow::anyhow!("cannot sandbox the students' code: {e}; for trusted code only, pass --no-sandbox")
        }),
        SandboxChoice::Auto => match bwrap() {
            Ok(program) => Ok(Tier::Bubblewrap(program)),
            Err(why) => landlock().map_err(|e| anyhow::anyhow!("{why}; and {e}")),
        },
    }
}

/// What one student's code may use.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall time of one check (the grader stops it and goes on with the next).
    pub time_per_check: Duration,
    /// Memory of the probe, in bytes: the address space (VmSize) the grader lets any of its processes reach
    /// before it stops the check (it watches, and says so: "used more than its 2 GiB of memory"). Twice
    /// as much is the kernel's hard limit ([`Limits::address_space`]), which fails one larger allocation
    /// at once: the process alone then knows why, and its words are only reported.
    pub memory: u64,
    /// What the probe may print (stdout and stderr together), in bytes.
    pub output: u64,
    /// What the probe (and the compiler, in its own `/tmp`) may write, in bytes: the size of its private
    /// `/tmp`, the one place it can write; also the largest file the compiler may write (the program).
    pub disk: u64,
    /// Wall time of one compiler run. A file that makes the compiler run over is found and fails alone,
    /// after one more run of at most this long (see `grading`).
    pub compile_time: Duration,
    /// Address space of one compiler run, in bytes: the compiler's memory is part of the student's budget,
    /// so that two compilers at once cannot take the machine. The largest honest compile (every exercise's
    /// reference in one program) peaks at about 1.2 GiB of address space.
    pub compile_memory: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time_per_check: Duration::from_secs(20),
            memory: 2 << 30,
            output: 1 << 20,
            disk: 256 << 20,
            compile_time: Duration::from_secs(120),
            compile_memory: 2 << 30,
        }
    }
}

impl Limits {
    /// The kernel's limit on a probe's address space (RLIMIT_AS): twice [`Limits::memory`], above the limit
    /// the grader watches, so that memory that grows is stopped by the grader, where it can say so.
    pub fn address_space(&self) -> u64 {
        2 * self.memory
    }

    /// "2 GiB", for messages.
    pub fn memory_words(&self) -> String {
        format!("{} GiB", self.memory >> 30)
    }

    /// The compiler's address space, for messages: "2 GiB".
    pub fn compile_memory_words(&self) -> String {
        format!("{} GiB", self.compile_memory >> 30)
    }

    /// "256 MiB", for messages.
    pub fn disk_words(&self) -> String {
        format!("{} MiB", self.disk >> 20)
    }
}

/// The bwrap program (`ANATOMY_BWRAP` names another), or a one-line error that says how to get it or do
/// without.
pub fn bwrap() -> Result<PathBuf> {
    let found = match std::env::var_os("ANATOMY_BWRAP") {
        Some(path) => Some(PathBuf::from(path)).filter(|p| p.is_file()),
        None => ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.is_file()),
    };
    let Some(bwrap) = found else {
        bail!(
            "cannot sandbox the students' code: bubblewrap is not installed (run `make setup`, or `apt-get install \
             bubblewrap`); to grade trusted code without a sandbox, pass --no-sandbox"
        );
    };
    // Namespaces can be switched off (a container without user namespaces): try one before the class.
    let out = Command::new(&bwrap)
        .args(["--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr"])
        .args(system_links(true))
        .args(["/usr/bin/true"])
        .output()
        .context("cannot run bwrap")?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        bail!(
            "cannot sandbox the students' code: bwrap cannot create namespaces here ({}); allow user namespaces \
             (sysctl kernel.unprivileged_userns_clone=1) or, for trusted code only, pass --no-sandbox",
            why.trim()
        );
    }
    Ok(bwrap)
}

/// /lib and /lib64 (and with `programs`, /bin and /sbin) as the host has them: links into /usr on a
/// merged-/usr system, else read-only binds.
fn system_links(programs: bool) -> Vec<String> {
    let mut args = Vec::new();
    let dirs: &[&str] = if programs { &["/lib", "/lib64", "/bin", "/sbin"] } else { &["/lib", "/lib64"] };
    for &dir in dirs {
        match std::fs::read_link(dir) {
            Ok(target) => args.extend(["--symlink".into(), target.display().to_string(), dir.into()]),
            Err(_) if Path::new(dir).is_dir() => args.extend(["--ro-bind".into(), dir.into(), dir.into()]),
            Err(_) => {}
        }
    }
    args
}

/// What the linker reads in /etc, in both tiers' view of the compiler.
const LINKER_ETC: [&str; 4] = ["/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d"];

/// The C libraries a probe is linked with, in both tiers' view of the probe.
const C_LIBRARIES: [&str; 2] = ["/usr/lib", "/usr/lib64"];

fn ro(args: &mut Vec<String>, path: &Path) {
    let p = path.display().to_string();
    args.extend(["--ro-bind".into(), p.clone(), p]);
}

/// The arguments every sandbox starts with: new namespaces, nothing of the host's environment, a
/// read-only `/dev` and a private `/tmp` of `disk` bytes; the scratch folder writable (the compiler's) or
/// read-only (the probe's, which works in `/tmp`).
fn common(scratch: &Path, writable: bool, disk: u64) -> Vec<String> {
    let mut args: Vec<String> = [
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--clearenv",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--remount-ro",
        "/dev",
    ]
    .map(String::from)
    .to_vec();
    args.extend(["--size".into(), disk.to_string(), "--tmpfs".into(), "/tmp".into()]);
    let s = scratch.display().to_string();
    let (bind, cwd) = if writable { ("--bind", s.clone()) } else { ("--ro-bind", "/tmp".to_string()) };
    args.extend([bind.into(), s.clone(), s, "--chdir".into(), cwd]);
    args
}

/// A sandbox for the compiler: the whole of /usr (the linker and C libraries), the Rust toolchain, the
/// built libraries the student's files are linked with, and the student's scratch folder, writable.
pub fn compile_command(bwrap: &Path, scratch: &Path, readable: &[PathBuf], program: &Path, disk: u64) -> Command {
    let mut args = common(scratch, true, disk);
    args.extend(["--ro-bind".into(), "/usr".into(), "/usr".into()]);
    args.extend(system_links(true));
    for etc in LINKER_ETC {
        args.extend(["--ro-bind-try".into(), etc.into(), etc.into()]);
    }
    for path in readable {
        ro(&mut args, path);
    }
    args.extend(["--setenv".into(), "PATH".into(), "/usr/bin:/bin".into()]);
    args.extend(["--setenv".into(), "HOME".into(), "/tmp".into(), "--remount-ro".into(), "/".into()]);
    let mut command = Command::new(bwrap);
    command.args(args).arg(program);
    command
}

/// A sandbox for the probe: the C libraries, the folders `libraries` (LibTorch), the probe itself and the
/// scratch folder (read-only), with `library_path` as LD_LIBRARY_PATH, working in a private `/tmp` of
/// `disk` bytes. The seccomp programs ([`seccomp_filters`]) go to the probe on its set-up channel: it
/// enters them in each check's process, after the fork its own parent needs.
pub fn run_command(
    bwrap: &Path,
    scratch: &Path,
    libraries: &[PathBuf],
    library_path: &Path,
    probe: &Path,
    disk: u64,
) -> Command {
    let mut args = common(scratch, false, disk);
    // The probe's parent is the namespace's first process itself: no bwrap process beside it that a
    // check's process could reach through /proc (bwrap's reaper is the grader's user's, and dumpable).
    args.push("--as-pid-1".into());
    for dir in C_LIBRARIES {
        if Path::new(dir).is_dir() {
            ro(&mut args, Path::new(dir));
        }
    }
    args.extend(system_links(false));
    for path in libraries {
        ro(&mut args, path);
    }
    ro(&mut args, probe);
    args.extend(["--setenv".into(), "LD_LIBRARY_PATH".into(), library_path.display().to_string()]);
    args.extend(["--setenv".into(), "OMP_NUM_THREADS".into(), "1".into()]);
    args.extend(["--remount-ro".into(), "/".into()]);
    let mut command = Command::new(bwrap);
    command.args(args).arg(probe);
    command
}

/// Two seccomp programs, as bytes: the first answers starting a process, opening a socket, tracing and
/// making shared memory with SIGSYS; the second answers clone3 with ENOSYS, so that the C library falls
/// back to clone, whose flags the first can read (threads — CLONE_THREAD — stay allowed: LibTorch uses
/// them).
pub fn seccomp_filters() -> Result<Vec<Vec<u8>>> {
    let arch = seccompiler::TargetArch::x86_64;
    let mut trapped: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in [
        libc::SYS_fork,
        libc::SYS_vfork,
        libc::SYS_socket,
        libc::SYS_socketpair,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        // Memory that no limit of the probe's counts: anonymous files and shared memory segments.
        libc::SYS_memfd_create,
        libc::SYS_shmget,
        libc::SYS_msgget,
        libc::SYS_mq_open,
    ] {
        trapped.insert(nr, vec![]);
    }
    let not_a_thread =
        SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(libc::CLONE_THREAD as u64), 0)?;
    trapped.insert(libc::SYS_clone, vec![SeccompRule::new(vec![not_a_thread])?]);
    let first = SeccompFilter::new(trapped, SeccompAction::Allow, SeccompAction::Trap, arch)?;
    let second = SeccompFilter::new(
        [(libc::SYS_clone3, vec![])].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )?;
    let mut programs = Vec::new();
    for filter in [first, second] {
        let program: seccompiler::BpfProgram = filter.try_into()?;
        let mut bytes = Vec::with_capacity(program.len() * 8);
        for instruction in program {
            bytes.extend_from_slice(&instruction.code.to_ne_bytes());
            bytes.push(instruction.jt);
            bytes.push(instruction.jf);
            bytes.extend_from_slice(&instruction.k.to_ne_bytes());
        }
        programs.push(bytes);
    }
    Ok(programs)
}

/// Resource limits, and descriptors to hand to the child at fixed numbers (`(source, target)`), applied
/// between fork and exec.
pub struct ChildSetup {
    pub memory: u64,
    pub cpu_seconds: u64,
    pub file_size: u64,
    /// Files to open read-only at these descriptor numbers.
    pub open_at: Vec<(CString, i32)>,
    /// Descriptors to duplicate to these numbers (the probe's channels), all below 64.
    pub dup_to: Vec<(i32, i32)>,
}

impl ChildSetup {
    pub fn apply(self, command: &mut Command) {
        unsafe {
            command.pre_exec(move || {
                let limit = |resource, value: u64| {
                    let r = libc::rlimit { rlim_cur: value, rlim_max: value };
                    if libc::setrlimit(resource, &r) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                };
                // First every source to a number of its own at 64 or above, then each to its target: a
                // source whose number is another's target is not overwritten before it is moved.
                let mut moved = Vec::with_capacity(self.dup_to.len());
                for (source, target) in &self.dup_to {
                    let copy = libc::fcntl(*source, libc::F_DUPFD_CLOEXEC, 64);
                    if copy < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    moved.push((copy, *target));
                }
                for (copy, target) in moved {
                    if libc::dup2(copy, target) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    libc::close(copy);
                }
                limit(libc::RLIMIT_AS, self.memory)?;
                limit(libc::RLIMIT_CPU, self.cpu_seconds)?;
                limit(libc::RLIMIT_FSIZE, self.file_size)?;
                limit(libc::RLIMIT_CORE, 0)?;
                limit(libc::RLIMIT_NOFILE, 256)?;
                for (path, target) in &self.open_at {
                    let fd = libc::open(path.as_ptr(), libc::O_RDONLY);
                    if fd < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    if fd != *target {
                        if libc::dup2(fd, *target) < 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                        libc::close(fd);
                    }
                }
                Ok(())
            });
        }
    }
}
