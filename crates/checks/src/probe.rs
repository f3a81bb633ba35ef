//! The probe: the `main` of the program built around one student's files.
//!
//! It runs each check with the student's functions wrapped in [`tape::record`], so that all it produces
//! is the tape of what those functions returned; what the check itself concludes here is thrown away. The
//! verdict is reached later by the judge, in a process that never loads student code (see
//! `anatomy_grade::grading`). Before every check it writes a START frame and after it a DONE frame, so that the
//! grader can time each check on its own and tell which one a crash belongs to. After a check in which the
//! student's code panicked it ends, and the grader starts a fresh probe for the rest.
use std::panic::{self, AssertUnwindSafe};

use super::checks::CheckResult;
use super::tape::{self, write_frame, DONE, FRESH, START, SYSCALL};

/// The seed of one check: the run's seed and the exercise's place in the course, so that every check of a
/// run draws other numbers.
pub fn check_seed(run_seed: i64, exercise: &str) -> i64 {
    let place = super::EXERCISES.iter().position(|e| e.name == exercise).unwrap_or(99) as i64;
    run_seed.wrapping_add(place.wrapping_mul(7919))
}

/// The probe's `main`: `PROBE --seed S [--from K]` runs the checks from the K-th on (0 first). Each check
/// comes with its exercise's name and whether the file is the untouched stub.
pub fn main(checks: &[(&str, bool, &dyn Fn() -> CheckResult)]) {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let seed: i64 = value("--seed").and_then(|s| s.parse().ok()).unwrap_or(0);
    let from: usize = value("--from").and_then(|s| s.parse().ok()).unwrap_or(0);
    report_forbidden_calls();
    panic::set_hook(Box::new(|_| {}));
    for (k, (name, stub, check)) in checks.iter().enumerate().skip(from) {
        write_frame(START, &(k as u32).to_le_bytes());
        tape::begin_check(check_seed(seed, name));
        tape::take_student_panic();
        let _ = panic::catch_unwind(AssertUnwindSafe(check));
        write_frame(DONE, &(k as u32).to_le_bytes());
        // A panic may have left the student's threads, memory or files behind: the next check starts in
        // a fresh probe (the grader starts it), and this one ends at once, running nothing of theirs. The
        // untouched stub's `todo!()` is ours and leaves nothing.
        if tape::take_student_panic() && !stub && k + 1 < checks.len() {
            write_frame(FRESH, &(k as u32).to_le_bytes());
            unsafe { libc::_exit(0) };
        }
    }
}

/// The sandbox answers a forbidden system call with SIGSYS; this handler writes the call's number to the
/// tape and ends the process, so that the grader can say what the code tried to do.
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
            libc::_exit(109);
        }
    }
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigsys as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as usize;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigaction(libc::SIGSYS, &action, std::ptr::null_mut());
    }
}
