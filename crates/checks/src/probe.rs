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
//! check starts and how its process ended (`waitpid`'s status, and how full the private `/tmp` was), and
//! empties that `/tmp` before the next check. The grader decides from those observations and from the
//! values on the tape, never from what a child says about itself. The wire format is
//! `anatomy_course::wire`.
use std::panic::{self, AssertUnwindSafe};

use anatomy_course::wire::{self, Exit, CPU_SECONDS, DONE, EXIT, FILTER, START, SYSCALL, WIPE_TMP};

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
    wipe_tmp: bool,
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
    for (k, (_, check)) in checks.iter().enumerate().skip(from) {
        let Some(seed) = read_seed() else { break };
        send(CONTROL, START, &(k as u32).to_le_bytes());
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            child(k, seed, &setup, parent, *check);
        }
        unsafe {
            libc::close(tape_fd(k));
            libc::close(output_fd(k));
        }
        // A fork that failed ends like a process killed at once: the grader says what it saw.
        let status = if pid < 0 { libc::SIGKILL } else { wait(pid) };
        let (tmp_used, tmp_size) = if setup.wipe_tmp { tmp_usage() } else { (0, 0) };
        if setup.wipe_tmp {
            wipe_tmp();
        }
        let exit = Exit { check: k as u32, status, tmp_used, tmp_size };
        send(CONTROL, EXIT, &exit.to_bytes());
    }
    unsafe { libc::_exit(0) }
}

/// One check in a fresh process: only its own channels, the sandbox's programs, then the check.
fn child(k: usize, seed: i64, setup: &Setup, parent: libc::pid_t, check: &dyn Fn() -> CheckResult) -> ! {
    unsafe {
        libc::dup2(tape_fd(k), tape::FD);
        libc::dup2(output_fd(k), 1);
        libc::dup2(output_fd(k), 2);
        // Nothing else of the parent's: not its control channel, not the seeds, not another check's pipes.
        for fd in (tape::FD + 1)..1024 {
            libc::close(fd);
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if libc::getppid() != parent {
            libc::_exit(0);
        }
        let cpu = libc::rlimit { rlim_cur: setup.cpu_seconds, rlim_max: setup.cpu_seconds };
        if setup.cpu_seconds > 0 {
            libc::setrlimit(libc::RLIMIT_CPU, &cpu);
        }
    }
    report_forbidden_calls();
    panic::set_hook(Box::new(|_| {}));
    if !setup.filters.is_empty() && enter_seccomp(&setup.filters).is_err() {
        // Not the student's doing: the grader reads an exit before the check's end as what it is.
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

/// Empties the private `/tmp`, so that no file a check's code wrote is there for the next check.
fn wipe_tmp() {
    if let Ok(entries) = std::fs::read_dir("/tmp") {
        for entry in entries.flatten() {
            let path = entry.path();
            let _ = match entry.file_type() {
                Ok(t) if t.is_dir() => std::fs::remove_dir_all(&path),
                _ => std::fs::remove_file(&path),
            };
        }
    }
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
            WIPE_TMP => setup.wipe_tmp = true,
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

/// A seccomp program (as `struct sock_filter` bytes) that lets a process signal itself and nothing else —
/// `kill`, `tgkill` and the queued signals only with its own pid as the target, `tkill` and pidfds not at
/// all — nor leave its process group (`setsid`, `setpgid`), so that a check's code can neither stop the
/// probe's parent nor outlive a kill of the group. Those calls fail with EPERM; a call of the x32 ABI or
/// another architecture ends the process.
pub fn own_process_only(pid: u32) -> Vec<u8> {
    const LD_W_ABS: u16 = 0x20;
    const JEQ: u16 = 0x15;
    const JGE: u16 = 0x35;
    const RET: u16 = 0x06;
    const ALLOW: u32 = 0x7fff_0000;
    const KILL_PROCESS: u32 = 0x8000_0000;
    const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
    let deny = 0x0005_0000 | libc::EPERM as u32;
    let targeted = [libc::SYS_kill, libc::SYS_tgkill, libc::SYS_rt_sigqueueinfo, libc::SYS_rt_tgsigqueueinfo];
    let refused =
        [libc::SYS_tkill, libc::SYS_pidfd_open, libc::SYS_pidfd_send_signal, libc::SYS_setsid, libc::SYS_setpgid];
    // Instructions by label; jumps are counted from the instruction after.
    let mut program: Vec<(u16, u8, u8, u32)> = Vec::new();
    let arg_at = 4 + targeted.len() + refused.len() + 1; // "load the first argument"
    let (deny_at, allow_at, kill_at) = (arg_at + 2, arg_at + 3, arg_at + 4);
    let to = |from: usize, target: usize| (target - from - 1) as u8;
    program.push((LD_W_ABS, 0, 0, 4)); // the architecture
    program.push((JEQ, 0, to(1, kill_at), AUDIT_ARCH_X86_64));
    program.push((LD_W_ABS, 0, 0, 0)); // the call's number
    program.push((JGE, to(3, kill_at), 0, 0x4000_0000)); // the x32 ABI
    for nr in targeted {
        let at = program.len();
        program.push((JEQ, to(at, arg_at), 0, nr as u32));
    }
    for nr in refused {
        let at = program.len();
        program.push((JEQ, to(at, deny_at), 0, nr as u32));
    }
    program.push((RET, 0, 0, ALLOW));
    assert_eq!(program.len(), arg_at);
    program.push((LD_W_ABS, 0, 0, 16)); // the first argument's low half (a pid or thread group)
    program.push((JEQ, to(arg_at + 1, allow_at), to(arg_at + 1, deny_at), pid));
    program.push((RET, 0, 0, deny));
    program.push((RET, 0, 0, ALLOW));
    program.push((RET, 0, 0, KILL_PROCESS));
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for (code, jt, jf, k) in program {
        bytes.extend_from_slice(&code.to_ne_bytes());
        bytes.push(jt);
        bytes.push(jf);
        bytes.extend_from_slice(&k.to_ne_bytes());
    }
    bytes
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
            "10: not entered, 11: itself refused, 12: its parent reached, 13: its group, 14: a new session, 15: tkill"
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
