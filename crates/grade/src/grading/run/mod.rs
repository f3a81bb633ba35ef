//! Step 2 of grading: running a unit's probe, in the sandbox for a class, and reading each check's tape.
//!
//! The probe runs every check in a process of its own (`anatomy_checks::probe`), and each check writes
//! on channels of its own ([`spawn`]), read here as that check's alone ([`channels`]): nothing one
//! exercise's code writes can land in another's record. Each check has its own wall-time, output,
//! memory and record limits, watched from outside; a check past one is stopped with the whole probe, fails
//! alone with the limit's words, and a fresh probe goes on from the next check. How a check's process
//! ended is read from what the grader observes ([`observed`]), never from what the process says.
use std::collections::VecDeque;
use std::fs::File;
use std::path::Path;
use std::process::Child;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::Setup;
use anatomy_checks::mistakes;
use anatomy_checks::tape::Entry;
use anatomy_course::wire::{
    self, Exit, DONE, EXIT, FRESH, MAX_RECORD, OUTPUT, PANIC, PANIC_AT, REFUSED, START, SYSCALL,
};
use anatomy_intake::tape::{self as reader, Broken, Frame};

mod channels;
mod observed;
mod spawn;

use channels::Event;
pub(in crate::grading) use observed::disk_full;

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

/// What one check left for the judge: the recorded answers, why it stopped if it did not finish, whether
/// its `/tmp` was full when it ended, and what its process printed.
#[derive(Debug, Clone, Default)]
pub(super) struct Record {
    pub entries: Vec<Entry>,
    pub stop: Option<Stop>,
    pub tmp_full: bool,
    pub printed: Printed,
    /// Where the student's code last panicked, as the probe's copy of its file names it ([`PANIC_AT`]).
    pub panic_at: Option<PanicAt>,
}

/// Where a panic happened in a student's file: its own line, or the student's call it came from.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum PanicAt {
    Line(String),
    Call(String),
}

impl PanicAt {
    /// From a [`PANIC_AT`] frame: `L` or `C`, then `fNNN.rs:LINE:COLUMN`; nothing else is taken.
    fn read(payload: &[u8]) -> Option<PanicAt> {
        let text = std::str::from_utf8(payload).ok().filter(|t| t.len() <= 64)?;
        let place = |p: &str| {
            let fine = p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b':');
            fine.then(|| p.to_string())
        };
        match text.split_at_checked(1)? {
            ("L", p) => place(p).map(PanicAt::Line),
            ("C", p) => place(p).map(PanicAt::Call),
            _ => None,
        }
    }

    /// The words added to a panic's message, naming the probe's copy (the grader names the file after).
    pub fn words(&self) -> String {
        match self {
            PanicAt::Line(p) => format!("at {p}"),
            PanicAt::Call(p) => format!("raised by the call at {p}"),
        }
    }
}

/// What a check's process printed (stdout and stderr together): its first bytes, and how many in all.
#[derive(Debug, Clone, Default)]
pub(super) struct Printed {
    pub kept: Vec<u8>,
    pub total: usize,
}

/// Runs the probe until every check has finished or been stopped; check `k` draws from `seeds[k]`.
pub(super) fn probe_all(cx: &Setup, folder: &Path, seeds: &[i64]) -> Result<Vec<Record>> {
    let mut records = vec![Record::default(); seeds.len()];
    let mut from = 0;
    while from < seeds.len() {
        from = probe_from(cx, folder, from, seeds, &mut records)?;
    }
    Ok(records)
}

/// The check running now, as the grader has seen it so far.
struct Running {
    k: usize,
    /// Its process's pid, as the probe's parent sees it (in the sandbox's PID namespace, if any).
    pid: u32,
    started: Instant,
    entries: Vec<Entry>,
    done: bool,
    recorded: usize,
    printed: Printed,
    panic_at: Option<PanicAt>,
    reported_call: Option<u32>,
    exit: Option<Exit>,
    /// Its tape's end (broken or not), and whether its output has ended, once each pipe has ended.
    tape_end: Option<Option<Broken>>,
    output_ended: bool,
    /// When its process was seen to end: the pipes' ends follow within moments.
    ended_at: Option<Instant>,
}

impl Running {
    fn new(k: usize, pid: u32) -> Self {
        Running {
            k,
            pid,
            started: Instant::now(),
            entries: Vec::new(),
            done: false,
            recorded: 0,
            printed: Printed::default(),
            panic_at: None,
            reported_call: None,
            exit: None,
            tape_end: None,
            output_ended: false,
            ended_at: None,
        }
    }

    /// A frame of this check's tape. A stop when the record passes its limit.
    fn frame(&mut self, frame: Frame) -> Option<Stop> {
        self.recorded += frame.payload.len() + 5;
        if self.recorded > MAX_RECORD {
            return Some(Stop::new(
                mistakes::TOO_LARGE,
                format!("sent the grader more than {} MiB of answers for one check, its limit", MAX_RECORD >> 20),
            ));
        }
        // After the check's end, nothing more is its answer.
        if self.done {
            return None;
        }
        match frame.tag {
            OUTPUT => self.entries.push(match reader::values(&frame.payload) {
                Ok(values) => Entry::Output(values),
                Err(why) => Entry::Refused(format!("returned {why}")),
            }),
            PANIC_AT => self.panic_at = PanicAt::read(&frame.payload),
            PANIC => {
                self.entries.push(Entry::Panic(String::from_utf8_lossy(&frame.payload).chars().take(4000).collect()))
            }
            REFUSED => {
                self.entries.push(Entry::Refused(String::from_utf8_lossy(&frame.payload).chars().take(4000).collect()))
            }
            DONE => self.done = true,
            SYSCALL => self.reported_call = wire::number(&frame.payload),
            _ => {}
        }
        None
    }

    /// Whether everything of this check has been read: its process's end and both its pipes'.
    fn complete(&self) -> bool {
        self.exit.is_some() && self.tape_end.is_some() && self.output_ended
    }

    /// The check's record, once complete (or given up on). A signal in its process's status is what
    /// happened, whatever its tape says (a DONE it wrote itself does not hide the sandbox's SIGSYS).
    fn record(self, cx: &Setup) -> Record {
        let exit = self.exit;
        let printed = String::from_utf8_lossy(&self.printed.kept);
        let ended = |exit| observed::ended(exit, self.reported_call, &printed, &cx.limits);
        let stop = match (&self.tape_end, exit) {
            (Some(Some(broken)), _) => Some(broken_record(broken)),
            (_, Some(exit)) if exit.signal().is_some() => Some(ended(exit)),
            (None, Some(_)) => Some(Stop::new(
                mistakes::CRASHED,
                "left its channel to the grader open after its process ended (a process it started holds it?)",
            )),
            _ if self.done => None,
            (_, Some(exit)) => Some(ended(exit)),
            (_, None) => Some(Stop::new(mistakes::CRASHED, "ended together with the probe in the middle of the check")),
        };
        let tmp_full = exit.is_some_and(Exit::tmp_full);
        Record { entries: self.entries, stop, tmp_full, printed: self.printed, panic_at: self.panic_at }
    }
}

/// A tape that could not be read on: the student's code wrote to its channel itself, or sent more than one
/// answer may take.
fn broken_record(broken: &Broken) -> Stop {
    match broken {
        Broken::TooLarge(_) | Broken::TooMany => Stop::new(mistakes::TOO_LARGE, broken.words()),
        _ => Stop::new(mistakes::BROKEN_RECORD, broken.words()),
    }
}

/// One run of the probe from check `from`: fills in the records of the checks that ran, and returns the
/// check to go on from (every check's count when all are done).
fn probe_from(cx: &Setup, folder: &Path, from: usize, seeds: &[i64], records: &mut [Record]) -> Result<usize> {
    let mut run = ProbeRun::start(cx, folder, from, seeds)?;
    loop {
        let wait = if run.control.is_empty() { TICK } else { Duration::ZERO };
        let event = run.events.recv_timeout(wait).ok();
        // A stop the grader decides itself: the probe is killed, the check fails alone, and a fresh probe
        // goes on from the next check.
        let stop = event.and_then(|e| run.take(e));
        run.take_control();
        if let Some(stop) = stop.or_else(|| run.past_a_limit()) {
            return run.stopped(stop, records);
        }
        if let Some(next) = run.finish_check(records)? {
            return Ok(next);
        }
        if let Some(next) = run.probe_ended(records)? {
            return Ok(next);
        }
    }
}

/// How often the grader looks at a running check's time and memory when nothing else happens.
const TICK: Duration = Duration::from_millis(20);

/// One probe, as the grader follows it: its process, its channels' events, and the check running now.
struct ProbeRun<'a> {
    cx: &'a Setup<'a>,
    child: Child,
    _group: super::cleanup::Group,
    /// The first check this probe runs, and how many there are in all.
    from: usize,
    count: usize,
    /// Each check's tape and output, until it starts and its readers take them.
    pipes: Vec<Option<(File, File)>>,
    tx: mpsc::Sender<Event>,
    events: mpsc::Receiver<Event>,
    /// The parent's frames not yet taken: each is taken when it can be, in order (a check's START waits
    /// until the check before it has been read to its end).
    control: VecDeque<Option<Frame>>,
    control_ended: bool,
    /// The parent asked for a fresh probe after the check it last ran ([`FRESH`]).
    fresh: bool,
    running: Option<Running>,
    next: usize,
    idle_since: Instant,
    polled: Instant,
}

impl<'a> ProbeRun<'a> {
    fn start(cx: &'a Setup<'a>, folder: &Path, from: usize, seeds: &[i64]) -> Result<Self> {
        let spawn::Probe { mut child, control, checks } = spawn::start(cx, folder, from, seeds)?;
        let group = super::cleanup::Group::new(child.id());
        let (tx, events) = mpsc::channel::<Event>();
        channels::control(control, tx.clone());
        channels::drain(child.stdout.take().expect("piped"));
        channels::drain(child.stderr.take().expect("piped"));
        Ok(ProbeRun {
            cx,
            child,
            _group: group,
            from,
            count: seeds.len(),
            pipes: checks,
            tx,
            events,
            control: VecDeque::new(),
            control_ended: false,
            fresh: false,
            running: None,
            next: from,
            idle_since: Instant::now(),
            polled: Instant::now(),
        })
    }

    /// The running check, if the event is about it.
    fn running_check(&mut self, k: usize) -> Option<&mut Running> {
        self.running.as_mut().filter(|r| r.k == k)
    }

    /// Takes one event; a stop when it breaks a limit.
    fn take(&mut self, event: Event) -> Option<Stop> {
        let output_limit = self.cx.limits.output;
        match event {
            Event::Control(f) => self.control.push_back(Some(f)),
            Event::ControlEnd => self.control.push_back(None),
            Event::Tape(k, f) => return self.running_check(k).and_then(|r| r.frame(f)),
            Event::TapeEnd(k, broken) => {
                let r = self.running_check(k)?;
                let stop =
                    broken.as_ref().filter(|b| matches!(b, Broken::TooLarge(_) | Broken::TooMany)).map(broken_record);
                r.tape_end = Some(broken);
                return stop;
            }
            Event::Printed(k, n, first) => {
                let r = self.running_check(k)?;
                r.printed.total += n;
                r.printed.kept.extend(first);
                return (r.printed.total as u64 > output_limit).then(|| {
                    let why = format!(
                        "printed more than {} KiB (stdout and stderr together) and was stopped: print less",
                        output_limit >> 10
                    );
                    Stop::new(mistakes::TOO_MUCH_OUTPUT, why)
                });
            }
            Event::OutputEnd(k) => {
                if let Some(r) = self.running_check(k) {
                    r.output_ended = true;
                }
            }
        }
        None
    }

    /// Takes the parent's frames that can be taken now.
    fn take_control(&mut self) {
        while let Some(front) = self.control.front() {
            match front {
                Some(f) if f.tag == START => {
                    if self.running.is_some() {
                        break;
                    }
                    if let Some((k, pid)) = wire::started(&f.payload).filter(|(k, _)| *k as usize == self.next) {
                        let k = k as usize;
                        if let Some((tape, output)) = self.pipes.get_mut(k - self.from).and_then(Option::take) {
                            channels::check(k, tape, output, self.tx.clone());
                        }
                        self.running = Some(Running::new(k, pid));
                    }
                }
                Some(f) if f.tag == FRESH => self.fresh = true,
                Some(f) if f.tag == EXIT => {
                    let exit = Exit::from_bytes(&f.payload);
                    if let (Some(r), Some(exit)) = (self.running.as_mut(), exit) {
                        if exit.check as usize == r.k {
                            r.exit = Some(exit);
                            r.ended_at = Some(Instant::now());
                        }
                    }
                }
                Some(_) => {}
                None => self.control_ended = true,
            }
            self.control.pop_front();
        }
    }

    /// The running check's time, and (every tick) its process's memory.
    fn past_a_limit(&mut self) -> Option<Stop> {
        let limits = &self.cx.limits;
        let r = self.running.as_ref().filter(|r| r.exit.is_none())?;
        if r.started.elapsed() > limits.time_per_check {
            let why = format!("timed out after {} s (an endless loop?)", limits.time_per_check.as_secs());
            return Some(Stop::new(mistakes::TIMED_OUT, why));
        }
        if self.polled.elapsed() < TICK {
            return None;
        }
        self.polled = Instant::now();
        (observed::address_space(self.child.id(), r.pid) > limits.memory).then(|| {
            let why = format!("used more than its {} of memory and was stopped", limits.memory_words());
            Stop::new(mistakes::OUT_OF_MEMORY, why)
        })
    }

    /// Stops the probe: the check running (or owed) fails with `stop`, and a fresh probe goes on after it.
    fn stopped(mut self, stop: Stop, records: &mut [Record]) -> Result<usize> {
        let k = self.running.as_ref().map_or(self.next, |r| r.k);
        kill_group(&mut self.child);
        let _ = wait_or_kill(&mut self.child, Duration::from_secs(5))?;
        let (entries, printed) = self.running.take().map(|r| (r.entries, r.printed)).unwrap_or_default();
        records[k] = Record { entries, stop: Some(stop), printed, ..Record::default() };
        Ok(k + 1)
    }

    /// A check whose process has ended, once both its pipes are read to their ends (moments later; a pipe
    /// still open after five seconds is held by something the grader does not wait for). `Some` when it
    /// was the last.
    fn finish_check(&mut self, records: &mut [Record]) -> Result<Option<usize>> {
        let finished = self
            .running
            .as_ref()
            .is_some_and(|r| r.complete() || r.ended_at.is_some_and(|t| t.elapsed() > Duration::from_secs(5)));
        if !finished {
            return Ok(None);
        }
        let r = self.running.take().expect("running");
        let k = r.k;
        records[k] = r.record(self.cx);
        self.next = k + 1;
        self.idle_since = Instant::now();
        if self.next < self.count {
            return Ok(None);
        }
        let _ = wait_or_kill(&mut self.child, Duration::from_secs(5))?;
        Ok(Some(self.next))
    }

    /// The parent ended — after a check it started and did not see end, or before the next one started —
    /// or started nothing for a time limit: that check fails with what the grader saw of the probe, and a
    /// fresh probe goes on after it.
    fn probe_ended(&mut self, records: &mut [Record]) -> Result<Option<usize>> {
        // The parent ended as it said it would, after a check that left something in its /tmp.
        if self.control_ended && self.fresh && self.running.is_none() {
            let _ = wait_or_kill(&mut self.child, Duration::from_secs(5))?;
            return Ok(Some(self.next));
        }
        if self.control_ended && self.running.as_ref().is_none_or(|r| r.exit.is_none()) {
            let status = wait_or_kill(&mut self.child, Duration::from_secs(5))?;
            let k = self.running.as_ref().map_or(self.next, |r| r.k);
            let why = match (&self.running, status) {
                (Some(_), _) => "ended together with the probe in the middle of the check".to_string(),
                (None, Some(s)) => format!("could not be started: the probe ended first ({s})"),
                (None, None) => "could not be started: the probe did not end when asked".to_string(),
            };
            let (entries, printed) = self.running.take().map(|r| (r.entries, r.printed)).unwrap_or_default();
            records[k] =
                Record { entries, stop: Some(Stop::new(mistakes::CRASHED, why)), printed, ..Record::default() };
            return Ok(Some(k + 1));
        }
        if self.running.is_none() && self.idle_since.elapsed() > self.cx.limits.time_per_check {
            kill_group(&mut self.child);
            let _ = wait_or_kill(&mut self.child, Duration::from_secs(5))?;
            let why = "could not be started: the probe did not start it in time";
            records[self.next] = Record { stop: Some(Stop::new(mistakes::CRASHED, why)), ..Record::default() };
            return Ok(Some(self.next + 1));
        }
        Ok(None)
    }
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
