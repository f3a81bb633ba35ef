//! The fallback tier: where bubblewrap cannot make namespaces (Docker's default profile, Gradescope,
//! PrairieLearn, GitHub's Ubuntu 24.04 runners), each compiler and probe run is fenced by the kernel's
//! **Landlock** instead — it may read only the folders named for it (the C libraries, LibTorch, the
//! toolchain, its own scratch folder and probe) and write nothing but its scratch folder (the compiler)
//! or nothing at all (the probe; `/dev/null` aside), may not signal or reach processes outside its own
//! fence (Landlock's scopes, ABI 6), nor open TCP (ABI 4) — plus the same **seccomp** programs as the
//! bubblewrap tier (no process, no socket, no shared memory), which the probe enters in each check's
//! process, the same resource limits, and, when the
//! grader runs as root, the probe runs as the unprivileged user `nobody` — or, where the course lies in a
//! folder closed to others, keeps root's uid with every capability dropped for good.
//!
//! What it does not give, against bubblewrap: a private `/proc` and PID namespace (the probe may still
//! read its own `/proc/self`, nothing else of `/proc`), and a private `/tmp` (there is no place to write).
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};
use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope, ABI,
};

/// The user a probe runs as when the grader is root.
const NOBODY: u32 = 65534;

/// The devices either fenced program reads, or writes (/dev/null): LibTorch seeds itself from
/// /dev/urandom and aborts without it.
const DEVICES: [&str; 3] = ["/dev/null", "/dev/urandom", "/dev/random"];

/// The compiler, fenced: it reads `readable` (the toolchain, the built libraries, LibTorch), the linker
/// and the C libraries, as in bubblewrap's view, and writes only the scratch folder (its temporary files
/// too). It runs no student code — the rules refuse what could run or read at compile time — so it keeps
/// the grader's user.
pub fn compile_command(scratch: &Path, readable: &[PathBuf], program: &Path) -> Result<Command> {
    let mut readable = readable.to_vec();
    readable.extend(["/usr", "/lib", "/lib64", "/bin", "/sbin"].iter().chain(&super::LINKER_ETC).map(PathBuf::from));
    readable.extend(["/sys/fs/cgroup", "/sys/devices/system/cpu"].map(PathBuf::from));
    let fence = Fence::new(&readable, &[scratch.to_path_buf()], &DEVICES, User::Same)?;
    let mut command = Command::new(program);
    command.current_dir(scratch).env_clear().env("PATH", "/usr/bin:/bin").env("TMPDIR", scratch).env("HOME", scratch);
    fence.apply(&mut command);
    Ok(command)
}

/// A probe, fenced: it reads the C libraries, `libraries` (LibTorch), the CPU's description and its own
/// folder, and writes nothing but /dev/null; as `nobody` when the grader is root. The seccomp programs
/// go to the probe on its set-up channel, as in the bubblewrap tier: it enters them in each check's
/// process, after the fork its parent needs.
pub fn run_command(scratch: &Path, libraries: &[PathBuf], probe: &Path) -> Result<Command> {
    let mut readable = libraries.to_vec();
    readable.extend(super::C_LIBRARIES.iter().chain(&["/lib", "/lib64", "/etc/ld.so.cache"]).map(PathBuf::from));
    // LibTorch picks its kernels (AVX2, AVX-512) from /proc/cpuinfo: without it, other kernels round
    // otherwise than the judge's, and exact checks fail.
    readable.extend(["/proc/cpuinfo", "/sys/devices/system/cpu"].map(PathBuf::from));
    readable.push(scratch.to_path_buf());
    let user = match running_as_root() {
        false => User::Same,
        // `nobody` must be able to reach the probe and LibTorch: a course in a folder closed to others
        // (a clone in `mktemp -d`'s 0700 folder, say) keeps root's uid with every capability dropped.
        true if libraries.iter().chain([&scratch.to_path_buf()]).all(|p| open_to_others(p)) => User::Nobody,
        true => User::RootWithoutCapabilities,
    };
    let fence = Fence::new(&readable, &[], &DEVICES, user)?;
    let mut command = Command::new(probe);
    command.current_dir(scratch);
    fence.apply(&mut command);
    Ok(command)
}

/// The kernel's Landlock ABI version, or `None` where Landlock is missing or switched off.
pub fn abi() -> Option<u32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_ulong = 1;
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    (v > 0).then_some(v as u32)
}

/// Who a fenced program runs as.
#[derive(Clone, Copy)]
enum User {
    /// The grader's user (it is not root).
    Same,
    /// `nobody`: the grader is root and the course's folders are open to others.
    Nobody,
    /// Root's uid with every capability dropped, for good (bounding set, securebits locked): the grader
    /// is root and `nobody` could not reach the course's folders.
    RootWithoutCapabilities,
}

/// Whether `path` and every folder above it let others in (and `path` itself be read).
fn open_to_others(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).map(|m| m.permissions().mode()).unwrap_or(0);
    mode(path) & 0o005 == 0o005 && path.ancestors().skip(1).all(|a| mode(a) & 0o001 != 0)
}

/// One child's fence, made in the grader before the child starts and entered by the child before it runs
/// its program.
struct Fence {
    ruleset: OwnedFd,
    /// Who to become first.
    user: User,
}

impl Fence {
    /// A fence that may read (and run) `readable`, write `writable` and read and write the files
    /// `devices`; for a probe of a root grader, with `nobody`'s rights.
    fn new(readable: &[PathBuf], writable: &[PathBuf], devices: &[&str], user: User) -> Result<Fence> {
        let abi = ABI::V6;
        let ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(abi))?
            .handle_access(AccessNet::from_all(abi))?
            .scope(Scope::from_all(abi))?
            .create()?
            .add_rules(path_beneath_rules(readable, AccessFs::from_read(abi)))?
            .add_rules(path_beneath_rules(writable, AccessFs::from_all(abi)))?
            .add_rules(path_beneath_rules(devices, AccessFs::ReadFile | AccessFs::WriteFile))?;
        let ruleset: Option<OwnedFd> = ruleset.into();
        let ruleset = ruleset.context("the kernel has no Landlock: the fallback sandbox cannot be made")?;
        Ok(Fence { ruleset, user })
    }

    /// Enters the fence in the child, between fork and exec: `nobody` (if asked), its own `/proc/self`
    /// readable, no new privileges, then Landlock. Only system calls: nothing here allocates.
    fn apply(self, command: &mut Command) {
        let Fence { ruleset, user } = self;
        unsafe {
            command.pre_exec(move || {
                let fail = || Err(std::io::Error::last_os_error());
                let become_nobody = || {
                    libc::setgroups(0, std::ptr::null()) == 0 && libc::setgid(NOBODY) == 0 && libc::setuid(NOBODY) == 0
                };
                let drop_capabilities = || {
                    // No root magic on exec or setuid, locked; no capability in any set, nor to be had again.
                    const SECUREBITS: libc::c_ulong = 0b10_1111; // NOROOT, NO_SETUID_FIXUP, no KEEP_CAPS: each locked
                    if libc::prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0) != 0 {
                        return false;
                    }
                    for cap in 0..64 {
                        libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
                    }
                    libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
                    #[repr(C)]
                    struct Header {
                        version: u32,
                        pid: i32,
                    }
                    const VERSION_3: u32 = 0x2008_0522;
                    let header = Header { version: VERSION_3, pid: 0 };
                    let none = [0u32; 6]; // effective, permitted, inheritable, for each half of the 64 bits
                    libc::syscall(libc::SYS_capset, &header as *const Header, none.as_ptr()) == 0
                };
                let ok = match user {
                    User::Same => true,
                    User::Nobody => become_nobody(),
                    User::RootWithoutCapabilities => drop_capabilities(),
                };
                if !ok {
                    return fail();
                }
                // Its own /proc/self (read only): the C library reads /proc/self/maps to find the stack.
                let own = libc::open(c"/proc/self".as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
                if own >= 0 {
                    #[repr(C, packed)]
                    struct PathBeneath {
                        allowed_access: u64,
                        parent_fd: i32,
                    }
                    const READ_FILE: u64 = 1 << 2;
                    const READ_DIR: u64 = 1 << 3;
                    let rule = PathBeneath { allowed_access: READ_FILE | READ_DIR, parent_fd: own };
                    libc::syscall(libc::SYS_landlock_add_rule, ruleset.as_raw_fd(), 1, &rule as *const PathBeneath, 0);
                    libc::close(own);
                }
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return fail();
                }
                if libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0) != 0 {
                    return fail();
                }
                Ok(())
            });
        }
    }
}

/// Whether a process the grader starts should give up root: the grader runs as root.
pub fn running_as_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}
