//! What the grader sees of a check's process from outside it: how it ended (the status its parent got from
//! `waitpid`), how full the private `/tmp` was, and how much memory the probe's processes hold. A verdict
//! and its id are chosen from these alone. What the process says of itself — its last line of output,
//! the system call it reports — is student-controlled text: it is added to the words as what the code
//! *reported*, and never chooses anything.
use std::path::Path;

use anatomy_course::wire::Exit;

use super::Stop;
use crate::sandbox::Limits;
use anatomy_checks::mistakes;
use anatomy_checks::tape;

/// Why a check's process that ended before its check did ended.
pub(super) fn ended(exit: Exit, reported_call: Option<u32>, printed: &str, limits: &Limits) -> Stop {
    let first = printed.lines().find(|l| !l.trim().is_empty()).map(|l| l.trim().chars().take(300).collect());
    let reported = |what: Option<String>| what.map(|w| format!("; it reported: {w}")).unwrap_or_default();
    match (exit.signal(), exit.code()) {
        (Some(libc::SIGSYS), _) => Stop::new(
            mistakes::FORBIDDEN_CALL,
            match reported_call {
                Some(nr) => format!(
                    "was stopped by the sandbox for a system call it forbids{}",
                    reported(Some(tape::forbidden_call_words(nr)))
                ),
                None => "was stopped by the sandbox for a system call it forbids (starting a process, a network \
                         connection, shared memory, signalling another process)"
                    .into(),
            },
        ),
        (Some(libc::SIGXCPU), _) => Stop::new(
            mistakes::TIMED_OUT,
            format!(
                "used up its {} s of CPU time and was stopped (an endless loop?)",
                limits.time_per_check.as_secs() + 10
            ),
        ),
        (Some(libc::SIGXFSZ), _) => Stop::new(mistakes::DISK_LIMIT, "wrote a file larger than 64 MiB and was stopped"),
        (Some(libc::SIGABRT), _) => Stop::new(mistakes::CRASHED, format!("aborted{}", reported(first.clone()))),
        (Some(libc::SIGSEGV), _) => {
            Stop::new(mistakes::CRASHED, format!("crashed (segmentation fault){}", reported(first.clone())))
        }
        (Some(n), _) => Stop::new(mistakes::CRASHED, format!("was killed by signal {n}")),
        (None, code) => Stop::new(
            mistakes::CRASHED,
            format!("exited (status {}) in the middle of the check{}", code.unwrap_or(-1), reported(first.clone())),
        ),
    }
}

/// The message of a check that failed while its `/tmp` was full: the limit, as the grader saw it.
pub(in crate::grading) fn disk_full(message: &str, limits: &Limits) -> String {
    format!("wrote more than {} (its /tmp was full when the check ended): {message}", limits.disk_words())
}

/// The address space (VmSize), in bytes, of the check's process: the process below `root` (the probe, or
/// bwrap) whose pid in its own namespace is `pid`, as the probe's parent saw it (`NSpid`'s last field;
/// without a namespace, its pid). Read from `/proc`, which shows every process's size to everyone; 0 once
/// the process is gone.
pub(super) fn address_space(root: u32, pid: u32) -> u64 {
    let mut stack = vec![root];
    let mut seen = 0;
    while let Some(p) = stack.pop() {
        seen += 1;
        if seen > 64 {
            break;
        }
        let status = std::fs::read_to_string(format!("/proc/{p}/status")).unwrap_or_default();
        let ns_pid = status.lines().find_map(|l| l.strip_prefix("NSpid:")).and_then(|l| l.split_whitespace().last());
        if ns_pid.and_then(|n| n.parse::<u32>().ok()) == Some(pid) {
            return vm_size(&status);
        }
        stack.extend(children(p));
    }
    0
}

fn vm_size(status: &str) -> u64 {
    let line = status.lines().find(|l| l.starts_with("VmSize:"));
    line.and_then(|l| l.split_whitespace().nth(1)).and_then(|kib| kib.parse::<u64>().ok()).map_or(0, |kib| kib << 10)
}

/// The children of every thread of `pid`.
fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return found };
    for task in tasks.flatten() {
        let list = std::fs::read_to_string(Path::new(&task.path()).join("children")).unwrap_or_default();
        found.extend(list.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ending_is_read_from_the_status_and_the_process_words_are_only_reported() {
        let limits = Limits::default();
        let exit = |status| Exit { check: 0, status, tmp_used: 0, tmp_size: 0 };
        // A process that prints the words of a limit it never met is still only what it was: an abort.
        let abort = ended(exit(libc::SIGABRT), None, "memory allocation of 99 bytes failed\nnote: more\n", &limits);
        assert_eq!(abort.id, mistakes::CRASHED);
        assert_eq!(abort.why, "aborted; it reported: memory allocation of 99 bytes failed");
        let sys = ended(exit(libc::SIGSYS), Some(libc::SYS_socket as u32), "", &limits);
        assert_eq!(sys.id, mistakes::FORBIDDEN_CALL);
        assert!(sys.why.ends_with("; it reported: system call 41, to open a network connection"), "{}", sys.why);
        let exited = ended(exit(3 << 8), None, "bye", &limits);
        assert_eq!(
            (exited.id, exited.why.as_str()),
            (mistakes::CRASHED, "exited (status 3) in the middle of the check; it reported: bye")
        );
        assert_eq!(ended(exit(libc::SIGXFSZ), None, "", &limits).id, mistakes::DISK_LIMIT);
        assert_eq!(ended(exit(libc::SIGXCPU), None, "", &limits).id, mistakes::TIMED_OUT);
    }

    #[test]
    fn the_address_space_of_a_process_is_found_by_its_pid() {
        let own = address_space(std::process::id(), std::process::id());
        assert!(own > 1 << 20, "{own}");
        assert_eq!(address_space(std::process::id(), u32::MAX), 0);
    }
}
