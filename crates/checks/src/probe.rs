//! The probe: the `main` of the program built around one student's files.
//!
//! **A student's code for an exercise runs only in a process that checks that exercise.** The probe
//! starts as a parent that runs no student code: it is loaded once (LibTorch with it), then, for each
//! check in turn, it forks a fresh child that checks that one exercise and ends. Nothing one exercise's code
//! does — a thread, a global, LibTorch's state or random generator, a write to a channel, an exit — can
//! reach another exercise's check, because no other check runs in that process. The parent forks before
//! any LibTorch thread exists (it never touches a tensor), so each child starts from the same clean copy,
//! and a fork costs milliseconds where a fresh program would load LibTorch again (about 0.2 s).
//!
//! Each child sees only its own channels: its tape (descriptor 3, a pipe the grader reads as this check's
//! and no other's) and its output (1 and 2); it closes everything else it inherited, enters the sandbox's
//! seccomp programs (with one more that lets it signal no process but itself, nor leave its process
//! group), and is killed if the parent dies. The parent makes itself undumpable first, so that no child can
//! open its descriptors or memory through `/proc`. It tells the grader, on its control channel, when each
//! check starts and how its process ended (`waitpid`'s status, and how full the private `/tmp` was); a
//! check that changed anything in that `/tmp` ends the probe, and the next check runs in a fresh one. The
//! grader decides from those observations and from the values on the tape, never from what a child says
//! about itself. The wire format is `anatomy_course::wire`.
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

use anatomy_course::wire::{self, Exit, CPU_SECONDS, DONE, EXIT, FILTER, FRESH, PRIVATE_TMP, START, SYSCALL};

use super::checks::CheckResult;
use super::tape;

/// The parent's control channel to the grader (START and EXIT frames).
pub const CONTROL: i32 = 3;
/// The checks' seeds, from the grader: eight bytes (an `i64`) per check, read one at a time, just before
/// the check starts, so that the parent never holds a seed of a check still to come.
pub const SEEDS: i32 = 4;
/// The set-up, from the grader, read once: the seccomp programs, whether to empty `/tmp`, the CPU limit.
pub const SETUP: i32 = 5;

/// The descriptor of check `k`'s tape in the parent (the child moves it to [`tape::FD`]).
pub fn tape_fd(k: usize) -> i32 {
    10 + 2 * k as i32
}

/// The descriptor of check `k`'s output (stdout and stderr) in the parent.
pub fn output_fd(k: usize) -> i32 {
    11 + 2 * k as i32
}

/// What the grader sets up for every check's process.
#[derive(Default)]
struct Setup {
    filters: Vec<Vec<u8>>,
    private_tmp: bool,
    cpu_seconds: u64,
}

/// The probe's `main`: `PROBE [--from K]` runs the checks from the K-th on (0 first), each in a process of
/// its own, with the seeds, set-up and channels the grader hands it at fixed descriptors.
pub fn main(checks: &[(&str, &dyn Fn() -> CheckResult)]) {
    let args: Vec<String> = std::env::args().collect();
    let from: usize =
        args.iter().position(|a| a == "--from").and_then(|i| args.get(i + 1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let setup = read_setup();
    unsafe {
        libc::close(SETUP);
        // Undumpable: its /proc files belong to root, and no child (without capabilities) may open its
        // descriptors or memory there.
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    let parent = unsafe { libc::getpid() };
    // The private /tmp as the sandbox made it, before any check: empty, or — when folders the sandbox
    // mounts lie below /tmp (a project cloned there) — the folders it made to mount them.
    let made = if setup.private_tmp { tmp_state(Path::new("/tmp")) } else { None };
    for (k, (_, check)) in checks.iter().enumerate().skip(from) {
        let Some(seed) = read_seed() else { break };
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            child(k, seed, &setup, parent, *check);
        }
        send(CONTROL, START, &wire::start(k as u32, pid.max(0) as u32));
        unsafe {
            libc::close(tape_fd(k));
            libc::close(output_fd(k));
        }
        // A fork that failed ends like a process killed at once: the grader says what it saw.
        let status = if pid < 0 { libc::SIGKILL } else { wait(pid) };
        let (tmp_used, tmp_size) = if setup.private_tmp { tmp_usage() } else { (0, 0) };
        let exit = Exit { check: k as u32, status, tmp_used, tmp_size };
        send(CONTROL, EXIT, &exit.to_bytes());
        // Each check finds the private /tmp as the sandbox made it: anything one changed there (a file
        // left, a folder made undeletable, a mode changed back) ends this probe, and the next check runs
        // in a fresh one, with a fresh /tmp.
        if setup.private_tmp && (made.is_none() || tmp_state(Path::new("/tmp")) != made) {
            send(CONTROL, FRESH, &[]);
            break;
        }
    }
    unsafe { libc::_exit(0) }
}

/// One check in a fresh process: only its own channels, the sandbox's programs, then the check. Should any
/// step of that fail, the process ends before the student's code runs (status 121, which the grader shows
/// as an exit in the middle of the check).
fn child(k: usize, seed: i64, setup: &Setup, parent: libc::pid_t, check: &dyn Fn() -> CheckResult) -> ! {
    let entered = unsafe {
        let moved = libc::dup2(tape_fd(k), tape::FD) == tape::FD
            && libc::dup2(output_fd(k), 1) == 1
            && libc::dup2(output_fd(k), 2) == 2;
        // Nothing else of the parent's: not its control channel, not the seeds, not another check's pipes.
        for fd in (tape::FD + 1)..1024 {
            libc::close(fd);
        }
        let orphaned = libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 || libc::getppid() != parent;
        let cpu = libc::rlimit { rlim_cur: setup.cpu_seconds, rlim_max: setup.cpu_seconds };
        let limited = setup.cpu_seconds == 0 || libc::setrlimit(libc::RLIMIT_CPU, &cpu) == 0;
        moved && !orphaned && limited
    };
    report_forbidden_calls();
    panic::set_hook(Box::new(tape::remember_panic_place));
    if !entered || (!setup.filters.is_empty() && enter_seccomp(&setup.filters).is_err()) {
        // Not the student's doing, and before any of their code: the check ends as an exit.
        unsafe { libc::_exit(121) };
    }
    tape::begin_check(seed);
    let _ = panic::catch_unwind(AssertUnwindSafe(check));
    tape::write_frame(DONE, &[]);
    unsafe { libc::_exit(0) }
}

/// `waitpid` until the child has ended; its raw status.
fn wait(pid: libc::pid_t) -> i32 {
    let mut status = 0;
    loop {
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return status;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return libc::SIGKILL;
        }
    }
}

/// Bytes in use in `/tmp`, and its size.
fn tmp_usage() -> (u64, u64) {
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c"/tmp".as_ptr(), &mut s) } != 0 {
        return (0, 0);
    }
    let size = s.f_blocks * s.f_frsize;
    (size.saturating_sub(s.f_bfree * s.f_frsize), size)
}

/// Everything on the private `/tmp`'s own filesystem, each entry with its identity, kind, owner,
/// permissions and the times the kernel sets on any change (a write in a folder, a `chmod`, an extended
/// attribute): equal before and after a check only if the check changed nothing there. The folders
/// mounted below it (from another filesystem) are named, not read. `None` past 256 entries or on any
/// error: a /tmp that cannot be read whole is not as the sandbox made it.
fn tmp_state(tmp: &Path) -> Option<Vec<(std::path::PathBuf, [i64; 9])>> {
    use std::os::unix::fs::MetadataExt;
    let own = std::fs::symlink_metadata(tmp).ok()?.dev();
    let (mut seen, mut next) = (Vec::new(), vec![tmp.to_path_buf()]);
    while let Some(path) = next.pop() {
        let m = std::fs::symlink_metadata(&path).ok()?;
        let times = [m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec()];
        let who = [m.dev() as i64, m.ino() as i64, m.mode() as i64, m.uid() as i64, m.gid() as i64];
        seen.push((path.clone(), [who[0], who[1], who[2], who[3], who[4], times[0], times[1], times[2], times[3]]));
        if m.is_dir() && m.dev() == own {
            for entry in std::fs::read_dir(&path).ok()? {
                next.push(entry.ok()?.path());
                if seen.len() + next.len() > 256 {
                    return None;
                }
            }
        }
    }
    seen.sort();
    Some(seen)
}

/// Reads exactly `buffer.len()` bytes from `fd`; `false` at its end.
fn read_exact(fd: i32, buffer: &mut [u8]) -> bool {
    let mut got = 0;
    while got < buffer.len() {
        let n = unsafe { libc::read(fd, buffer[got..].as_mut_ptr().cast(), buffer.len() - got) };
        match n {
            0 => return false,
            n if n < 0 => {
                if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    return false;
                }
            }
            n => got += n as usize,
        }
    }
    true
}

fn read_seed() -> Option<i64> {
    let mut bytes = [0u8; 8];
    read_exact(SEEDS, &mut bytes).then(|| i64::from_le_bytes(bytes))
}

/// The set-up frames, to the channel's end (a probe started without one runs without filters or limits).
fn read_setup() -> Setup {
    let mut setup = Setup::default();
    loop {
        let mut head = [0u8; 5];
        if !read_exact(SETUP, &mut head) {
            return setup;
        }
        let len = u32::from_le_bytes(head[1..5].try_into().expect("4 bytes")) as usize;
        let mut payload = vec![0u8; len.min(1 << 20)];
        if len > 1 << 20 || !read_exact(SETUP, &mut payload) {
            return setup;
        }
        match head[0] {
            FILTER => setup.filters.push(payload),
            PRIVATE_TMP => setup.private_tmp = true,
            CPU_SECONDS => setup.cpu_seconds = payload.try_into().map(u64::from_le_bytes).unwrap_or(0),
            _ => {}
        }
    }
}

/// Writes a frame whole to `fd`.
fn send(fd: i32, tag: u8, payload: &[u8]) {
    let bytes = wire::frame(tag, payload);
    let mut sent = 0;
    while sent < bytes.len() {
        let n = unsafe { libc::write(fd, bytes[sent..].as_ptr().cast(), bytes.len() - sent) };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return;
        }
        sent += n as usize;
    }
}

/// No new privileges, then this process's own program (signals to itself only, no leaving its process
/// group), then the grader's (no process, no socket, no shared memory).
fn enter_seccomp(filters: &[Vec<u8>]) -> Result<(), ()> {
    let own = own_process_only(unsafe { libc::getpid() } as u32);
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(());
        }
    }
    for program in std::iter::once(&own).chain(filters) {
        let filter =
            libc::sock_fprog { len: (program.len() / 8) as u16, filter: program.as_ptr() as *mut libc::sock_filter };
        const SECCOMP_SET_MODE_FILTER: libc::c_ulong = 1;
        if unsafe { libc::syscall(libc::SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &filter as *const libc::sock_fprog) }
            != 0
        {
            return Err(());
        }
    }
    Ok(())
}

/// A seccomp program (as `struct sock_filter` bytes) that keeps a check's process to itself: it may signal
/// itself and nothing else (`kill`, `tgkill` and the queued signals only with its own pid as the target;
/// `tkill`, pidfds, and signals delivered on I/O through `fcntl(F_SETOWN…)` or `ioctl(FIOSETOWN…)` not at
/// all), may change the limits, scheduling and priority of no process but itself (`prlimit64` and
/// `sched_set*` only for pid 0 or its own; `setpriority`, `ioprio_set` not at all), and may not leave its
/// process group (`setsid`, `setpgid`), so that it can neither reach the probe's parent nor outlive a kill
/// of the group. Those calls fail with EPERM; a call of the x32 ABI or another architecture ends the
/// process.
pub fn own_process_only(pid: u32) -> Vec<u8> {
    const ALLOW: u32 = 0x7fff_0000;
    const KILL_PROCESS: u32 = 0x8000_0000;
    const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
    let deny = 0x0005_0000 | libc::EPERM as u32;
    let (nr, arch, arg0, arg1) = (0, 4, 16, 24); // offsets in struct seccomp_data (low halves of args)
    let mut p = Bpf::default();
    p.load(arch);
    p.unless(AUDIT_ARCH_X86_64, "kill");
    p.load(nr);
    p.at_least(0x4000_0000, "kill"); // the x32 ABI
    for call in [libc::SYS_kill, libc::SYS_tgkill, libc::SYS_rt_sigqueueinfo, libc::SYS_rt_tgsigqueueinfo] {
        p.on(call as u32, "own pid");
    }
    for call in [
        libc::SYS_prlimit64,
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setattr,
    ] {
        p.on(call as u32, "own pid or 0");
    }
    for call in [
        libc::SYS_tkill,
        libc::SYS_pidfd_open,
        libc::SYS_pidfd_send_signal,
        libc::SYS_setsid,
        libc::SYS_setpgid,
        libc::SYS_setpriority,
        libc::SYS_ioprio_set,
    ] {
        p.on(call as u32, "deny");
    }
    p.on(libc::SYS_fcntl as u32, "fcntl");
    p.on(libc::SYS_ioctl as u32, "ioctl");
    p.ret(ALLOW);
    p.label("own pid or 0");
    p.load(arg0);
    p.on(0, "allow");
    p.label("own pid");
    p.load(arg0);
    p.on(pid, "allow");
    p.ret(deny);
    p.label("fcntl");
    p.load(arg1);
    // F_SETOWN, F_SETSIG and F_SETOWN_EX (Linux's asm-generic/fcntl.h; libc names only the first).
    for cmd in [libc::F_SETOWN as u32, 10, 15] {
        p.on(cmd, "deny");
    }
    p.ret(ALLOW);
    p.label("ioctl");
    p.load(arg1);
    // FIOSETOWN and SIOCSPGRP (Linux's asm-generic/sockios.h), and TIOCSPGRP.
    for request in [0x8901, 0x8902, libc::TIOCSPGRP as u32] {
        p.on(request, "deny");
    }
    p.ret(ALLOW);
    p.label("deny");
    p.ret(deny);
    p.label("allow");
    p.ret(ALLOW);
    p.label("kill");
    p.ret(KILL_PROCESS);
    p.bytes()
}

/// A few classic-BPF instructions with jumps to named labels, resolved when the program is written out.
#[derive(Default)]
struct Bpf {
    code: Vec<(u16, Option<&'static str>, Option<&'static str>, u32)>,
    labels: Vec<(&'static str, usize)>,
}

impl Bpf {
    const LD_W_ABS: u16 = 0x20;
    const JEQ: u16 = 0x15;
    const JGE: u16 = 0x35;
    const RET: u16 = 0x06;

    fn load(&mut self, offset: u32) {
        self.code.push((Self::LD_W_ABS, None, None, offset));
    }
    /// To `label` when the loaded word is `value`, else on.
    fn on(&mut self, value: u32, label: &'static str) {
        self.code.push((Self::JEQ, Some(label), None, value));
    }
    /// To `label` unless the loaded word is `value`.
    fn unless(&mut self, value: u32, label: &'static str) {
        self.code.push((Self::JEQ, None, Some(label), value));
    }
    /// To `label` when the loaded word is at least `value`.
    fn at_least(&mut self, value: u32, label: &'static str) {
        self.code.push((Self::JGE, Some(label), None, value));
    }
    fn ret(&mut self, action: u32) {
        self.code.push((Self::RET, None, None, action));
    }
    fn label(&mut self, name: &'static str) {
        self.labels.push((name, self.code.len()));
    }

    fn bytes(&self) -> Vec<u8> {
        let at = |label: Option<&str>, from: usize| -> u8 {
            label.map_or(0, |l| {
                let target = self.labels.iter().find(|(n, _)| *n == l).expect("a label of the program").1;
                u8::try_from(target - from - 1).expect("a forward jump within 255 instructions")
            })
        };
        let mut bytes = Vec::with_capacity(self.code.len() * 8);
        for (i, &(code, jt, jf, k)) in self.code.iter().enumerate() {
            bytes.extend_from_slice(&code.to_ne_bytes());
            bytes.push(at(jt, i));
            bytes.push(at(jf, i));
            bytes.extend_from_slice(&k.to_ne_bytes());
        }
        bytes
    }
}

/// The sandbox answers a forbidden system call with SIGSYS; this handler writes the call's number to the
/// tape (the process's own report, shown as such) and lets the same signal end the process, so that the
/// parent sees, and the grader is told, that the sandbox stopped it.
fn report_forbidden_calls() {
    extern "C" fn on_sigsys(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        // siginfo_t for SIGSYS: after signo, errno, code (and padding), a pointer, then the call's number.
        let nr = unsafe { *((info as *const u8).add(16 + std::mem::size_of::<usize>()) as *const i32) } as u32;
        let mut frame = [0u8; 9];
        frame[0] = SYSCALL;
        frame[1..5].copy_from_slice(&4u32.to_le_bytes());
        frame[5..9].copy_from_slice(&nr.to_le_bytes());
        unsafe {
            libc::write(tape::FD, frame.as_ptr().cast(), frame.len());
            libc::signal(libc::SIGSYS, libc::SIG_DFL);
            libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::syscall(libc::SYS_gettid), libc::SIGSYS);
        }
    }
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigsys as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as usize;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigaction(libc::SIGSYS, &action, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project cloned below /tmp has its folders mounted there, their ancestors made in the private /tmp:
    /// as the sandbox made it, /tmp is clean; anything a check does there — a file anywhere, one made and
    /// removed again, a folder's permissions changed and changed back — is not.
    #[test]
    fn the_private_tmp_is_clean_only_as_the_sandbox_made_it() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = crate::test_dir::TestDir::new("checks-probe-tmp");
        std::fs::create_dir_all(tmp.join("clone/target/exercise-grader/run-1/u000")).unwrap();
        std::fs::create_dir_all(tmp.join("clone/.deps/libtorch")).unwrap();
        let made = tmp_state(&tmp);
        assert!(made.is_some() && tmp_state(&tmp) == made, "read twice, unchanged");
        let pause = || std::thread::sleep(std::time::Duration::from_millis(20));
        for leftover in ["note.txt", "clone/note.txt", "clone/target/exercise-grader/other"] {
            let made = tmp_state(&tmp);
            pause();
            std::fs::write(tmp.join(leftover), "left by a check").unwrap();
            assert_ne!(tmp_state(&tmp), made, "{leftover}");
            let with = tmp_state(&tmp);
            pause();
            std::fs::remove_file(tmp.join(leftover)).unwrap();
            assert!(tmp_state(&tmp) != made && tmp_state(&tmp) != with, "{leftover} made and removed again");
        }
        let made = tmp_state(&tmp);
        let clone = tmp.join("clone");
        pause();
        std::fs::set_permissions(&clone, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(&clone, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_ne!(tmp_state(&tmp), made, "a folder's mode changed and changed back");
        for i in 0..300 {
            std::fs::create_dir_all(tmp.join(format!("many/{i}"))).unwrap();
        }
        assert_eq!(tmp_state(&tmp), None, "past 256 entries");
    }

    /// In a forked child (only system calls between fork and exit): the program lets it signal itself, and
    /// not its parent, nor leave its process group; an exit code per finding.
    #[test]
    fn a_checks_process_may_signal_itself_and_nothing_else() {
        let parent = unsafe { libc::getpid() };
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let program = own_process_only(unsafe { libc::getpid() } as u32);
            let filter = libc::sock_fprog {
                len: (program.len() / 8) as u16,
                filter: program.as_ptr() as *mut libc::sock_filter,
            };
            let code = unsafe {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                    || libc::syscall(libc::SYS_seccomp, 1 as libc::c_ulong, 0, &filter as *const libc::sock_fprog) != 0
                {
                    10
                } else if libc::kill(libc::getpid(), 0) != 0 {
                    11
                } else if libc::kill(parent, 0) == 0 || *libc::__errno_location() != libc::EPERM {
                    12
                } else if libc::kill(0, 0) == 0 || libc::kill(-1, 0) == 0 {
                    13
                } else if libc::setsid() != -1 || libc::setpgid(0, 0) == 0 {
                    14
                } else if libc::syscall(libc::SYS_tkill, parent, 0) == 0 {
                    15
                } else if libc::prlimit(
                    parent,
                    libc::RLIMIT_NOFILE,
                    std::ptr::null(),
                    &mut libc::rlimit { rlim_cur: 0, rlim_max: 0 },
                ) == 0
                    || libc::prlimit(
                        0,
                        libc::RLIMIT_NOFILE,
                        std::ptr::null(),
                        &mut libc::rlimit { rlim_cur: 0, rlim_max: 0 },
                    ) != 0
                {
                    16
                } else if libc::fcntl(1, libc::F_SETOWN, parent) == 0
                    || libc::setpriority(libc::PRIO_PROCESS, 0, 1) == 0
                {
                    17
                } else if libc::fcntl(1, libc::F_GETFD) < 0 {
                    18
                } else {
                    0
                }
            };
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status), "{status}");
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "10: not entered, 11: itself refused, 12: its parent reached, 13: its group, 14: a new session, 15: tkill, 16: another's limits (or not its own), 17: signals on I/O or priority, 18: an ordinary fcntl refused"
        );
    }

    #[test]
    fn the_own_process_program_jumps_inside_itself() {
        let bytes = own_process_only(42);
        assert_eq!(bytes.len() % 8, 0);
        let n = bytes.len() / 8;
        for (i, ins) in bytes.chunks(8).enumerate() {
            let code = u16::from_ne_bytes([ins[0], ins[1]]);
            if code & 0x07 == 0x05 {
                // A conditional jump: both targets inside the program.
                assert!(i + 1 + (ins[2] as usize) < n && i + 1 + (ins[3] as usize) < n, "{i}");
            }
        }
        // The last three are: deny, allow, kill.
        let ret = |i: usize| u32::from_ne_bytes(bytes[i * 8 + 4..i * 8 + 8].try_into().unwrap());
        assert_eq!((ret(n - 3), ret(n - 2), ret(n - 1)), (0x0005_0000 | libc::EPERM as u32, 0x7fff_0000, 0x8000_0000));
    }
}
