//! Step 2 of grading: running a unit's probe, in the sandbox for a class, and reading its tape. Each
//! check has its own wall-time limit; a check that runs over, crashes, prints too much or is stopped by
//! the sandbox fails alone, and the probe starts again from the next check.
use std::ffi::CString;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::Setup;
use crate::mistakes;
use crate::sandbox::{self, ChildSetup, Limits, Tier};
use crate::tape;

/// One probe run's findings for each check: the recorded entries and, when the check did not finish, why.
pub(super) type Tapes = Vec<(Vec<tape::Entry>, Option<Stop>)>;

/// Why a check did not finish: the grader's id for it ([`mistakes::STOPS`]) and the words a student reads.
/// Both are decided here, where the grader sees what happened, never read back out of the words.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Stop {
    pub id: &'static str,
    pub why: String,
}

impl Stop {
    fn new(id: &'static str, why: impl Into<String>) -> Self {
        Stop { id, why: why.into() }
    }
}

/// Runs the probe until every check has finished or been stopped.
///
/// Every check records at least one call of the student's function, so a check that "finished" with
/// nothing recorded, in a run that then broke off, is where the run stopped telling the truth: code that
/// writes the pipe itself (or exits) can close its own check and fake the starts and ends of the checks
/// after it. That check fails (its record is empty), and the checks after it run again in a fresh probe,
/// so that what one file does costs only that file's check.
///
/// A probe also ends on its own after a check in which the student's code panicked ([`tape::FRESH`]): the
/// checks after it run in a fresh probe, so that nothing the panicking code started reaches them.
pub(super) fn probe_all(cx: &Setup, folder: &Path, count: usize) -> Result<Tapes> {
    let mut tapes: Tapes = vec![(Vec::new(), None); count];
    let mut from = 0;
    while from < count {
        let ended = probe_once(cx, folder, from, &mut tapes)?;
        let (k, why) = match ended {
            Ended::All => break,
            Ended::Stopped(k, why) => (k, Some(why)),
            Ended::Fresh(k) => (k, None),
        };
        match (from..k).find(|&j| tapes[j].0.is_empty()) {
            Some(j) => {
                tapes[j + 1..=k.min(count - 1)].fill((Vec::new(), None));
                from = j + 1;
            }
            // Stopped: check `k` fails with the reason. Fresh: check `k` had not started; it runs next.
            None => match why {
                Some(why) => {
                    tapes[k].1 = Some(why);
                    from = k + 1;
                }
                None => from = k,
            },
        }
    }
    Ok(tapes)
}

/// How one run of the probe ended.
enum Ended {
    /// Every check from the first asked for finished.
    All,
    /// Check `k` did not finish, for the reason given.
    Stopped(usize, Stop),
    /// The probe ended itself before check `k` ([`tape::FRESH`]): the rest run in a fresh probe.
    Fresh(usize),
}

enum Event {
    Frame(tape::Frame),
    TapeClosed,
    Flood,
}

/// One run of the probe from check `from`. Fills in the tapes of the checks that ran, and says how the run
/// ended.
fn probe_once(cx: &Setup, folder: &Path, from: usize, tapes: &mut Tapes) -> Result<Ended> {
    let probe_path = folder.join("probe");
    let (read_end, write_end) = pipe()?;
    let mut command = match cx.tier {
        Tier::Bubblewrap(bwrap) => {
            let fds: Vec<i32> = (0..cx.filters.len() as i32).map(|i| 10 + i).collect();
            let runtime = cx.recipe.runtime_dirs();
            sandbox::run_command(bwrap, folder, &runtime, &cx.recipe.libtorch_lib, &probe_path, &fds, cx.limits.disk)
        }
        Tier::Landlock(_) => {
            sandbox::landlock::run_command(folder, &cx.recipe.runtime_dirs(), &probe_path, cx.programs.to_vec())?
        }
        Tier::None => {
            let mut c = Command::new(&probe_path);
            c.current_dir(folder);
            c
        }
    };
    command.args(["--seed", &cx.seed.to_string(), "--from", &from.to_string()]);
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
    let _group = super::cleanup::Group::new(child.id());
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
    let mut stop: Option<Stop> = None;
    let mut syscall: Option<u32> = None;
    let mut recorded_bytes = 0usize;
    let mut tape_closed = false;
    let mut fresh = false;
    while !tape_closed {
        let mut left = cx.limits.time_per_check.saturating_sub(started.elapsed());
        if stop.is_some() {
            // Stopped for a flood: only the tape's last frames are still to be read.
            left = left.min(Duration::from_secs(5));
        }
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
                    if recorded_bytes > 64 << 20 && stop.is_none() {
                        stop = Some(Stop::new(
                            mistakes::CRASHED,
                            "returned more data than any check asks for (over 64 MiB)",
                        ));
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
                // Between checks only, and only after the check it names: the probe asks to be started again.
                tape::FRESH
                    if current.is_none()
                        && expected > from
                        && tape::number(&f.payload) == Some(expected as u32 - 1) =>
                {
                    fresh = true;
                }
                _ => {}
            },
            Ok(Event::TapeClosed) => tape_closed = true,
            // The output pipe and the tape are read by two threads, so the flood can be seen before the
            // frames the probe wrote ahead of it (the previous check's DONE, the flooder's START): charged at
            // once, a flood could fail the check before the flooder's. So the probe is stopped here and the
            // tape read to its end; the check running then is the one that flooded.
            Ok(Event::Flood) => {
                if stop.is_none() {
                    stop = Some(Stop::new(
                        mistakes::TOO_MUCH_OUTPUT,
                        format!(
                            "printed more than {} KiB (stdout and stderr together) and was stopped: print less",
                            cx.limits.output >> 10
                        ),
                    ));
                    kill_group(&mut child);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if stop.is_none() {
                    let why = format!("timed out after {} s (an endless loop?)", cx.limits.time_per_check.as_secs());
                    stop = Some(Stop::new(mistakes::TIMED_OUT, why));
                }
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
        return Ok(Ended::All);
    }
    if fresh && stop.is_none() && current.is_none() {
        return Ok(Ended::Fresh(expected));
    }
    let why = stop.unwrap_or_else(|| {
        if let Some(nr) = syscall {
            return Stop::new(mistakes::FORBIDDEN_CALL, tape::forbidden_call_words(nr));
        }
        died(status, &stderr, &cx.limits)
    });
    // The check that was running, or the first that never started.
    Ok(Ended::Stopped(current.unwrap_or(expected.min(tapes.len() - 1)), why))
}

/// Why a probe that stopped on its own stopped.
fn died(status: Option<std::process::ExitStatus>, stderr: &str, limits: &Limits) -> Stop {
    let last =
        stderr.lines().rev().find(|l| !l.trim().is_empty()).map(|l| l.trim().chars().take(300).collect::<String>());
    let Some(status) = status else { return Stop::new(mistakes::CRASHED, "did not stop when asked") };
    if stderr.contains("has overflowed its stack") {
        return Stop::new(mistakes::CRASHED, "overflowed its stack (endless recursion?)");
    }
    if stderr.contains("memory allocation of") {
        return Stop::new(mistakes::OUT_OF_MEMORY, format!("ran out of its {} of memory", limits.memory_words()));
    }
    // Under bubblewrap the probe is not our child: its death by signal N arrives as exit status 128 + N.
    let signal = status.signal().or_else(|| status.code().filter(|c| (129..160).contains(c)).map(|c| c - 128));
    match signal {
        // Trapped with signals blocked (as the C library does while starting a process): killed outright.
        Some(libc::SIGSYS) => Stop::new(
            mistakes::FORBIDDEN_CALL,
            "tried to start a process or made another system call the sandbox forbids, and was stopped",
        ),
        Some(libc::SIGXCPU) => Stop::new(mistakes::CRASHED, "used up its CPU time and was stopped"),
        Some(libc::SIGXFSZ) => Stop::new(mistakes::DISK_LIMIT, "wrote a file larger than 64 MiB and was stopped"),
        Some(libc::SIGABRT) => {
            Stop::new(mistakes::CRASHED, format!("aborted{}", last.map(|l| format!(": {l}")).unwrap_or_default()))
        }
        Some(libc::SIGSEGV) => Stop::new(mistakes::CRASHED, "crashed (segmentation fault)"),
        Some(n) => Stop::new(mistakes::CRASHED, format!("was killed by signal {n}")),
        None => Stop::new(
            mistakes::CRASHED,
            format!(
                "exited (status {}) in the middle of the check{}",
                status.code().unwrap_or(-1),
                last.map(|l| format!("; it printed: {l}")).unwrap_or_default()
            ),
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

/// The exit status, or `None` when the limit passed and the process (group) was killed.
pub(super) fn wait_or_kill(child: &mut Child, limit: Duration) -> Result<Option<std::process::ExitStatus>> {
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
