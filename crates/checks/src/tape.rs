//! The tape between the probe and the judge: what a student's functions returned, call by call.
//!
//! A check is ordinary code that makes inputs, calls the student's functions and compares what comes back.
//! Grading runs it twice. In the *probe* — the sandboxed process that also holds the student's code — each
//! call goes through [`record`], which writes the return value (or the panic's text) to the tape and
//! nothing else: whatever the probe decides is thrown away. In the *judge* — `anatomy` itself, which never
//! loads student code — the same check runs again with [`replay`] in place of the student's functions, so
//! the verdict comes from the judge's own inputs and comparisons and from nothing but the recorded values.
//!
//! Both sides seed LibTorch's generator from the run's seed before a check and again after every call, so
//! they draw the same inputs even when a student's function draws random numbers of its own.
//!
//! On the wire a tape is a stream of frames: a tag byte, a little-endian `u32` length, the payload. Return
//! values travel as safetensors (exact bits, NaN included, and a parser that rejects malformed input
//! instead of crashing); a panic travels as its text.
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::io::Write;

use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use tch::{Device, Kind, Tensor};

/// A check is starting (payload: its index in the probe's list, `u32`).
pub const START: u8 = b'S';
/// A student's function returned (payload: safetensors).
pub const OUTPUT: u8 = b'O';
/// A student's function panicked (payload: the text).
pub const PANIC: u8 = b'P';
/// The check finished in the probe (payload: its index).
pub const DONE: u8 = b'D';
/// The sandbox stopped a forbidden system call (payload: the call's number, `u32`).
pub const SYSCALL: u8 = b'X';
/// The probe ends after the check it just finished, so that the next one starts in a fresh probe
/// (payload: the finished check's index): the student's code panicked, and what it started — threads,
/// memory, files in `/tmp` — must not reach the next check.
pub const FRESH: u8 = b'F';

/// Whether a student's function panicked since the last [`take_student_panic`] (the probe's side).
static STUDENT_PANICKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a student's function panicked since the last call, and forgets it.
pub fn take_student_panic() -> bool {
    STUDENT_PANICKED.swap(false, std::sync::atomic::Ordering::SeqCst)
}

/// The file descriptor the probe writes its tape to (the grader opens it as a pipe).
pub const FD: i32 = 3;
/// The largest frame the judge reads: far above any check's outputs, far below what would hurt.
pub const MAX_FRAME: usize = 8 << 20;

/// What a student's function may return: tensors, tuples of them, or a number.
pub trait Taped: Sized {
    fn to_tensors(&self) -> Vec<Tensor>;
    fn from_tensors(tensors: Vec<Tensor>) -> Option<Self>;
}

impl Taped for Tensor {
    fn to_tensors(&self) -> Vec<Tensor> {
        vec![self.shallow_clone()]
    }
    fn from_tensors(mut t: Vec<Tensor>) -> Option<Self> {
        (t.len() == 1).then(|| t.remove(0))
    }
}

impl Taped for (Tensor, Tensor) {
    fn to_tensors(&self) -> Vec<Tensor> {
        vec![self.0.shallow_clone(), self.1.shallow_clone()]
    }
    fn from_tensors(t: Vec<Tensor>) -> Option<Self> {
        let [a, b]: [Tensor; 2] = t.try_into().ok()?;
        Some((a, b))
    }
}

impl Taped for (Tensor, Tensor, Tensor) {
    fn to_tensors(&self) -> Vec<Tensor> {
        vec![self.0.shallow_clone(), self.1.shallow_clone(), self.2.shallow_clone()]
    }
    fn from_tensors(t: Vec<Tensor>) -> Option<Self> {
        let [a, b, c]: [Tensor; 3] = t.try_into().ok()?;
        Some((a, b, c))
    }
}

impl Taped for f64 {
    fn to_tensors(&self) -> Vec<Tensor> {
        vec![Tensor::from(*self)]
    }
    fn from_tensors(t: Vec<Tensor>) -> Option<Self> {
        let t = <Tensor as Taped>::from_tensors(t)?;
        (t.kind() == Kind::Double && t.numel() == 1).then(|| t.double_value(&[]))
    }
}

fn dtype(kind: Kind) -> Option<Dtype> {
    Some(match kind {
        Kind::Bool => Dtype::BOOL,
        Kind::Uint8 => Dtype::U8,
        Kind::Int8 => Dtype::I8,
        Kind::Int16 => Dtype::I16,
        Kind::Int => Dtype::I32,
        Kind::Int64 => Dtype::I64,
        Kind::Half => Dtype::F16,
        Kind::BFloat16 => Dtype::BF16,
        Kind::Float => Dtype::F32,
        Kind::Double => Dtype::F64,
        _ => return None,
    })
}

fn kind(dtype: Dtype) -> Option<Kind> {
    Some(match dtype {
        Dtype::BOOL => Kind::Bool,
        Dtype::U8 => Kind::Uint8,
        Dtype::I8 => Kind::Int8,
        Dtype::I16 => Kind::Int16,
        Dtype::I32 => Kind::Int,
        Dtype::I64 => Kind::Int64,
        Dtype::F16 => Kind::Half,
        Dtype::BF16 => Kind::BFloat16,
        Dtype::F32 => Kind::Float,
        Dtype::F64 => Kind::Double,
        _ => return None,
    })
}

/// The bytes of a return value, or the reason it cannot be recorded (said to the student).
pub fn encode(tensors: &[Tensor]) -> Result<Vec<u8>, String> {
    let mut owned = Vec::new();
    for (i, t) in tensors.iter().enumerate() {
        if !t.defined() {
            return Err("returned an undefined tensor".into());
        }
        let Some(d) = dtype(t.kind()) else {
            return Err(format!("returned a tensor of kind {:?}, which the grader cannot read", t.kind()));
        };
        let t = t.f_detach().and_then(|t| t.f_to_device(Device::Cpu)).and_then(|t| t.f_contiguous());
        let t = t.map_err(|e| format!("returned a tensor the grader cannot read: {e}"))?;
        let shape: Vec<usize> = t.size().iter().map(|&s| s as usize).collect();
        let mut bytes = vec![0u8; t.numel() * t.kind().elt_size_in_bytes()];
        t.f_copy_data_u8(&mut bytes, t.numel())
            .map_err(|e| format!("returned a tensor the grader cannot read: {e}"))?;
        owned.push((format!("{i}"), d, shape, bytes));
    }
    let views: Vec<(String, TensorView)> = owned
        .iter()
        .map(|(name, d, shape, bytes)| (name.clone(), TensorView::new(*d, shape.clone(), bytes).expect("sizes agree")))
        .collect();
    safetensors::tensor::serialize(views, &None).map_err(|e| format!("could not record the result: {e}"))
}

/// Tensors back from [`encode`]'s bytes; `None` for anything malformed.
pub fn decode(bytes: &[u8]) -> Option<Vec<Tensor>> {
    let file = SafeTensors::deserialize(bytes).ok()?;
    let mut named: Vec<(usize, Tensor)> = Vec::new();
    for (name, view) in file.tensors() {
        let index: usize = name.parse().ok()?;
        let shape: Vec<i64> = view.shape().iter().map(|&s| s as i64).collect();
        let t = Tensor::f_from_data_size(view.data(), &shape, kind(view.dtype())?).ok()?;
        named.push((index, t));
    }
    named.sort_by_key(|(i, _)| *i);
    if named.iter().enumerate().any(|(i, (j, _))| i != *j) {
        return None;
    }
    Some(named.into_iter().map(|(_, t)| t).collect())
}

/// Writes one frame to the tape's file descriptor (the probe's side).
pub fn write_frame(tag: u8, payload: &[u8]) {
    use std::os::fd::FromRawFd;
    // The descriptor stays open for the probe's whole life: borrow it, never close it.
    let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(FD) });
    let mut frame = Vec::with_capacity(payload.len() + 5);
    frame.push(tag);
    frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    frame.extend_from_slice(payload);
    let _ = file.write_all(&frame);
}

/// What the judge replays for one call.
#[derive(Debug, Clone)]
pub enum Entry {
    Output(Vec<u8>),
    Panic(String),
}

/// The panic payload of a call the probe never answered: the reason it stopped (a time limit, a crash).
#[derive(Debug, Clone)]
pub struct Stopped(pub String);

struct Seeding {
    seed: i64,
    calls: i64,
}

thread_local! {
    static SEEDING: RefCell<Seeding> = const { RefCell::new(Seeding { seed: 0, calls: 0 }) };
    static REPLAY: RefCell<(VecDeque<Entry>, Option<String>)> = const { RefCell::new((VecDeque::new(), None)) };
}

/// Seeds LibTorch's generator for a check; both sides call it with the same numbers.
pub fn begin_check(seed: i64) {
    SEEDING.with(|s| *s.borrow_mut() = Seeding { seed, calls: 0 });
    tch::manual_seed(seed);
}

fn after_call() {
    let (seed, calls) = SEEDING.with(|s| {
        let mut s = s.borrow_mut();
        s.calls += 1;
        (s.seed, s.calls)
    });
    tch::manual_seed(seed.wrapping_mul(31).wrapping_add(calls));
}

/// The probe's side: calls the student's function, writes what it returned (or its panic) to the tape,
/// and hands the value back to the check.
pub fn record<R: Taped>(call: impl FnOnce() -> R) -> R {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
        Ok(value) => {
            match encode(&value.to_tensors()) {
                Ok(bytes) => write_frame(OUTPUT, &bytes),
                Err(why) => write_frame(PANIC, why.as_bytes()),
            }
            after_call();
            value
        }
        Err(payload) => {
            STUDENT_PANICKED.store(true, std::sync::atomic::Ordering::SeqCst);
            write_frame(PANIC, super::panic_text(&*payload).as_bytes());
            std::panic::resume_unwind(payload)
        }
    }
}

/// Loads the tape of one check for [`replay`]: its entries, and why the probe stopped if it did not finish.
pub fn load_replay(entries: Vec<Entry>, stopped: Option<String>) {
    REPLAY.with(|r| *r.borrow_mut() = (entries.into(), stopped));
}

/// The judge's side: the next value the student's function returned, or its panic again.
pub fn replay<R: Taped>() -> R {
    let (next, stopped) = REPLAY.with(|r| {
        let mut r = r.borrow_mut();
        (r.0.pop_front(), r.1.clone())
    });
    match next {
        Some(Entry::Output(bytes)) => {
            let value = decode(&bytes).and_then(R::from_tensors);
            after_call();
            match value {
                Some(v) => v,
                None => std::panic::panic_any(Stopped("returned something the grader cannot read".into())),
            }
        }
        Some(Entry::Panic(text)) => std::panic::panic_any(text),
        None => std::panic::panic_any(Stopped(stopped.unwrap_or_else(|| {
            "the record of its calls ended before the check did: the code exited, wrote to the grader's channel, or \
             changed its inputs in place"
                .into()
        }))),
    }
}

/// A frame as read from the tape.
#[derive(Debug)]
pub struct Frame {
    pub tag: u8,
    pub payload: Vec<u8>,
}

/// The `u32` a START, DONE or SYSCALL frame carries.
pub fn number(payload: &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(payload.try_into().ok()?))
}

/// Names for the system calls the sandbox forbids, as the grader reports them.
pub fn forbidden_call_words(nr: u32) -> String {
    let table: HashMap<i64, &str> = [
        (libc::SYS_socket, "tried to open a network connection"),
        (libc::SYS_socketpair, "tried to open a network connection"),
        (libc::SYS_connect, "tried to open a network connection"),
        (libc::SYS_fork, "tried to start a process"),
        (libc::SYS_vfork, "tried to start a process"),
        (libc::SYS_clone, "tried to start a process"),
        (libc::SYS_execve, "tried to start a process"),
        (libc::SYS_execveat, "tried to start a process"),
        (libc::SYS_ptrace, "tried to trace a process"),
        (libc::SYS_process_vm_readv, "tried to read another process's memory"),
        (libc::SYS_process_vm_writev, "tried to write another process's memory"),
        (libc::SYS_memfd_create, "tried to make shared memory, which no limit of its own would count"),
        (libc::SYS_shmget, "tried to make shared memory, which no limit of its own would count"),
        (libc::SYS_msgget, "tried to make a message queue, which no limit of its own would count"),
        (libc::SYS_mq_open, "tried to make a message queue, which no limit of its own would count"),
    ]
    .into_iter()
    .collect();
    match table.get(&(nr as i64)) {
        Some(words) => format!("{words} (system call {nr}), which the sandbox forbids"),
        None => format!("made system call {nr}, which the sandbox forbids"),
    }
}
