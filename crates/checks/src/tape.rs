//! The tape between the probe and the judge: what a student's functions returned, call by call.
//!
//! A check is ordinary code that makes inputs, calls the student's functions and compares what comes back.
//! Grading runs it twice. In the *probe* — a process that checks this one exercise and holds the student's
//! code — each call goes through [`record`], which writes the return value (or the panic's text) to the
//! check's own channel and nothing else: whatever the probe decides is thrown away. In the *judge* —
//! `anatomy` itself, which never loads student code — the same check runs again with [`replay`] in place of
//! the student's functions, so the verdict comes from the judge's own inputs and comparisons and from
//! nothing but the recorded values.
//!
//! **The judge reads values, never memory.** A tensor's memory is not always its value: LibTorch keeps
//! negation and conjugation as flags on a view, strides can repeat one element a million times, and
//! sparse or MKL-DNN layouts hold something else entirely. So every tensor a student's function returns
//! goes through one canonical path ([`canonical`]) before it is recorded: made dense, moved to the CPU,
//! its negation and conjugation resolved, and copied *by value* (LibTorch's own `copy_`) into a fresh
//! contiguous tensor — or it is refused, with a reason that names the layout, the kind or the size limit.
//! The probe's check goes on with that same canonical value, so both sides see the same thing.
//!
//! Both sides seed LibTorch's generator from the check's seed before a check and again after every call,
//! so they draw the same inputs even when a student's function draws random numbers of its own.
//!
//! The frames' format is `anatomy_course::wire`; the grader reads them with `anatomy_intake::tape`. Return
//! values travel as safetensors (exact bits, NaN included).
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::io::Write;

use safetensors::tensor::{Dtype, TensorView};
use tch::{Device, Kind, Tensor};

use anatomy_course::wire::{self, Value, MAX_FRAME, OUTPUT, PANIC, PANIC_AT, REFUSED};

/// The file descriptor a check's process writes its tape to (a pipe of that check's alone).
pub const FD: i32 = 3;

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

/// A number travels as a 0-dim `f64` tensor, and only as that.
impl Taped for f64 {
    fn to_tensors(&self) -> Vec<Tensor> {
        vec![Tensor::from(*self)]
    }
    fn from_tensors(t: Vec<Tensor>) -> Option<Self> {
        let t = <Tensor as Taped>::from_tensors(t)?;
        (t.kind() == Kind::Double && t.dim() == 0).then(|| t.double_value(&[]))
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

fn kind(dtype: wire::Dtype) -> Kind {
    match dtype {
        wire::Dtype::Bool => Kind::Bool,
        wire::Dtype::U8 => Kind::Uint8,
        wire::Dtype::I8 => Kind::Int8,
        wire::Dtype::I16 => Kind::Int16,
        wire::Dtype::I32 => Kind::Int,
        wire::Dtype::I64 => Kind::Int64,
        wire::Dtype::F16 => Kind::Half,
        wire::Dtype::BF16 => Kind::BFloat16,
        wire::Dtype::F32 => Kind::Float,
        wire::Dtype::F64 => Kind::Double,
    }
}

/// Why an answer is not recorded: larger than one answer may take (its size, in bytes), or another reason,
/// in words for the student.
#[derive(Debug, Clone, PartialEq)]
pub enum NotRecorded {
    TooLarge(u128),
    Refused(String),
}

impl NotRecorded {
    /// The words a student reads.
    pub fn words(&self) -> String {
        match self {
            NotRecorded::TooLarge(bytes) => format!(
                "returned {} MiB of tensors for one answer, over the {} MiB the grader reads of one answer",
                bytes.div_ceil(1 << 20),
                MAX_FRAME >> 20
            ),
            NotRecorded::Refused(why) => why.clone(),
        }
    }
}

/// A returned tensor by value: dense, on the CPU, negation and conjugation resolved, in a fresh contiguous
/// tensor of its own; or why it cannot be. Its size is checked against what one answer may take before
/// anything of that size is made, so a tensor that repeats one element (stride 0) a billion times costs
/// nothing.
pub fn canonical(t: &Tensor) -> Result<Tensor, NotRecorded> {
    canonical_or_why(t).map_err(|e| match e {
        Err(bytes) => NotRecorded::TooLarge(bytes),
        Ok(why) => NotRecorded::Refused(why),
    })
}

/// [`canonical`], with `Err(Err(bytes))` for an answer too large and `Err(Ok(why))` for any other reason.
fn canonical_or_why(t: &Tensor) -> Result<Tensor, Result<String, u128>> {
    if !t.defined() {
        return Err(Ok("returned an undefined tensor".into()));
    }
    if transformer_anatomy::inspect::is_nested(t) {
        return Err(Ok("returned a nested tensor (tensors of different shapes held as one), which no check reads: \
                       return one tensor of one shape"
            .into()));
    }
    let kind = t.f_kind().map_err(|e| Ok(format!("returned a tensor of a kind no check reads ({e})")))?;
    if dtype(kind).is_none() {
        return Err(Ok(format!("returned a tensor of kind {kind:?}, which no check reads")));
    }
    // tch's `size` panics where LibTorch will not give one shape (a layout no check reads): said as what it is.
    let shape = std::panic::catch_unwind(|| t.size()).map_err(|_| {
        Ok("returned a tensor whose shape LibTorch cannot give as one list of sizes, which no check reads".to_string())
    })?;
    let bytes = shape.iter().try_fold(kind.elt_size_in_bytes() as u128, |n, &d| n.checked_mul(d.max(0) as u128));
    match bytes {
        Some(b) if b <= MAX_FRAME as u128 => {}
        other => return Err(Err(other.unwrap_or(u128::MAX))),
    }
    let layout = if t.is_sparse() {
        "a sparse layout"
    } else if t.is_mkldnn() {
        "MKL-DNN's layout"
    } else {
        "its layout"
    };
    let dense = t.f_detach().and_then(|t| t.f_to_dense(None, false)).map_err(|e| {
        Ok(format!("returned a tensor in {layout}, which the grader cannot make dense ({})", first_line(&e)))
    })?;
    let resolved = dense
        .f_to_device(Device::Cpu)
        .and_then(|t| t.f_resolve_conj())
        .and_then(|t| t.f_resolve_neg())
        .map_err(|e| Ok(format!("returned a tensor the grader cannot read ({})", first_line(&e))))?;
    let mut fresh = Tensor::f_empty(shape.as_slice(), (kind, Device::Cpu))
        .map_err(|e| Ok(format!("returned a tensor the grader cannot copy ({})", first_line(&e))))?;
    fresh
        .f_copy_(&resolved)
        .map_err(|e| Ok(format!("returned a tensor the grader cannot copy ({})", first_line(&e))))?;
    Ok(fresh)
}

fn first_line(e: &tch::TchError) -> String {
    e.to_string().lines().next().unwrap_or_default().chars().take(300).collect()
}

/// The bytes of a return value already made [`canonical`], or why it cannot be recorded.
pub fn encode(tensors: &[Tensor]) -> Result<Vec<u8>, NotRecorded> {
    let mut owned = Vec::new();
    for (i, t) in tensors.iter().enumerate() {
        let d = dtype(t.kind()).expect("canonical: a kind the tape carries");
        let shape: Vec<usize> = t.size().iter().map(|&s| s as usize).collect();
        let mut bytes = vec![0u8; t.numel() * t.kind().elt_size_in_bytes()];
        t.f_copy_data_u8(&mut bytes, t.numel())
            .map_err(|e| NotRecorded::Refused(format!("could not record the answer ({e})")))?;
        owned.push((format!("{i}"), d, shape, bytes));
    }
    let views: Vec<(String, TensorView)> = owned
        .iter()
        .map(|(name, d, shape, bytes)| (name.clone(), TensorView::new(*d, shape.clone(), bytes).expect("sizes agree")))
        .collect();
    let bytes = safetensors::tensor::serialize(views, &None)
        .map_err(|e| NotRecorded::Refused(format!("could not record the answer: {e}")))?;
    if bytes.len() > MAX_FRAME {
        return Err(NotRecorded::TooLarge(bytes.len() as u128));
    }
    Ok(bytes)
}

/// Tensors from the values the grader read off the tape (`anatomy_intake::tape::values`).
pub fn tensors(values: &[Value]) -> Option<Vec<Tensor>> {
    values
        .iter()
        .map(|v| {
            let shape: Vec<i64> = v.shape.iter().map(|&s| s as i64).collect();
            Tensor::f_from_data_size(&v.bytes, &shape, kind(v.dtype)).ok()
        })
        .collect()
}

/// Writes one frame to the check's channel (the probe's side).
pub fn write_frame(tag: u8, payload: &[u8]) {
    write_raw(&wire::frame(tag, payload));
}

fn write_raw(bytes: &[u8]) {
    use std::os::fd::FromRawFd;
    // The descriptor stays open for the process's whole life: borrow it, never close it.
    let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(FD) });
    let _ = file.write_all(bytes);
}

/// What the judge replays for one call.
#[derive(Debug, Clone)]
pub enum Entry {
    /// The tensors the function returned, by value.
    Output(Vec<Value>),
    /// The function panicked, with this text.
    Panic(String),
    /// The answer was not recorded, or cannot be read, for this reason.
    Refused(String),
}

/// The panic payload of a call the judge does not get a value for: the reason (a time limit, a crash, an
/// answer refused), which becomes the check's message.
#[derive(Debug, Clone)]
pub struct Stopped(pub String);

struct Seeding {
    seed: i64,
    calls: i64,
}

thread_local! {
    static SEEDING: RefCell<Seeding> = const { RefCell::new(Seeding { seed: 0, calls: 0 }) };
    static REPLAY: RefCell<(VecDeque<Entry>, Option<String>)> = const { RefCell::new((VecDeque::new(), None)) };
    /// Whether a check's gate (`checks::call`) is waiting for this call's answer, to compare its shapes and
    /// kinds with the reference's before any value is read.
    static GATE: Cell<bool> = const { Cell::new(false) };
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

/// Runs `call` (a student's function, or its replay) with the gate open: the judge hands out a recorded
/// answer only to a check that will compare its shapes and kinds before its values ([`replay`]).
pub(crate) fn through_gate<T>(call: impl FnOnce() -> T) -> T {
    struct Close(bool);
    impl Drop for Close {
        fn drop(&mut self) {
            GATE.with(|g| g.set(self.0));
        }
    }
    let _close = Close(GATE.with(|g| g.replace(true)));
    call()
}

/// The probe's side: calls the student's function, writes its answer by value (or its panic, or why the
/// answer is refused) to the tape, and hands the check the same canonical value the judge will read. An
/// answer larger than one frame may be is sent as what it is, a frame that claims its size: the grader
/// sees a frame over its limit, stops the check and says so itself.
pub fn record<R: Taped>(call: impl FnOnce() -> R) -> R {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
        Ok(value) => {
            let recorded = value.to_tensors().iter().map(canonical).collect::<Result<Vec<_>, _>>().and_then(|ts| {
                let bytes = encode(&ts)?;
                Ok((ts, bytes))
            });
            match recorded {
                Ok((tensors, bytes)) => {
                    write_frame(OUTPUT, &bytes);
                    after_call();
                    R::from_tensors(tensors).expect("the same number of tensors")
                }
                Err(NotRecorded::TooLarge(bytes)) => {
                    let claimed = bytes.min(u32::MAX as u128) as u32;
                    write_raw(&[&[OUTPUT][..], &claimed.to_le_bytes()].concat());
                    std::panic::panic_any(Stopped(NotRecorded::TooLarge(bytes).words()))
                }
                Err(NotRecorded::Refused(why)) => {
                    write_frame(REFUSED, why.as_bytes());
                    std::panic::panic_any(Stopped(why))
                }
            }
        }
        Err(payload) => {
            if let Some(place) = PANIC_PLACE.with(|p| p.borrow_mut().take()) {
                write_frame(PANIC_AT, place.as_bytes());
            }
            write_frame(PANIC, super::panic_text(&*payload).as_bytes());
            std::panic::resume_unwind(payload)
        }
    }
}

thread_local! {
    /// Where the last panic happened in a student's file, as [`remember_panic_place`] found it.
    static PANIC_PLACE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The probe's panic hook: remembers where in the student's file a panic happened, for [`record`] to
/// send before the panic's text ([`wire::PANIC_AT`]). A panic's own line is the student's where the
/// panicking function tracks its caller (`unwrap`, `expect`, indexing, `todo!`); a panic inside a library
/// (a LibTorch error that `tch` unwraps) is placed at the student's call that led to it, read from the
/// backtrace's line tables. Nothing is printed.
pub fn remember_panic_place(info: &std::panic::PanicHookInfo) {
    let own = info.location().and_then(|l| copy_file(l.file()).map(|f| format!("L{f}:{}:{}", l.line(), l.column())));
    let place = own.or_else(|| {
        let trace = std::backtrace::Backtrace::force_capture().to_string();
        trace.lines().find_map(|line| copy_place(line.trim())).map(|at| format!("C{at}"))
    });
    PANIC_PLACE.with(|p| *p.borrow_mut() = place);
}

/// The file name of one of the probe's copies of a student's files (`f003.rs`), at the end of a path.
fn copy_file(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next()?;
    let digits = name.strip_prefix('f')?.strip_suffix(".rs")?;
    (digits.len() == 3 && digits.bytes().all(|b| b.is_ascii_digit())).then_some(name)
}

/// `f003.rs:12:5` from a backtrace's `at ./f003.rs:12:5` line, if it names a copy of a student's file.
fn copy_place(line: &str) -> Option<String> {
    let at = line.strip_prefix("at ")?;
    let mut parts = at.rsplitn(3, ':');
    let (column, row, file) = (parts.next()?, parts.next()?, parts.next()?);
    let numbers = [column, row].iter().all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    numbers.then(|| copy_file(file).map(|f| format!("{f}:{row}:{column}")))?
}

/// Loads the tape of one check for [`replay`]: its entries, and why the probe stopped if it did not finish.
pub fn load_replay(entries: Vec<Entry>, stopped: Option<String>) {
    REPLAY.with(|r| *r.borrow_mut() = (entries.into(), stopped));
}

/// The judge's side: the next value the student's function returned, or its panic again. Only through a
/// check's gate: a check that would read an answer without comparing its shape and kind first is a bug in
/// the grader, and the answer is not handed out.
pub fn replay<R: Taped>() -> R {
    if !GATE.with(|g| g.get()) {
        debug_assert!(false, "a check read a recorded answer outside its gate (checks::call)");
        std::panic::panic_any(Stopped(
            "the grader's check read an answer without checking its shape first: a bug in \
                                       the grader, not in this file"
                .into(),
        ));
    }
    let (next, stopped) = REPLAY.with(|r| {
        let mut r = r.borrow_mut();
        (r.0.pop_front(), r.1.clone())
    });
    match next {
        Some(Entry::Output(values)) => {
            let value = tensors(&values).and_then(R::from_tensors);
            after_call();
            match value {
                Some(v) => v,
                None => std::panic::panic_any(Stopped("returned something the grader cannot read".into())),
            }
        }
        Some(Entry::Panic(text)) => std::panic::panic_any(text),
        Some(Entry::Refused(why)) => std::panic::panic_any(Stopped(why)),
        None => std::panic::panic_any(Stopped(stopped.unwrap_or_else(|| {
            "the record of its calls ended before the check did: the code exited, wrote to the grader's channel, or \
             changed its inputs in place"
                .into()
        }))),
    }
}

/// Names for the system calls the sandbox forbids, as the grader reports them.
pub fn forbidden_call_words(nr: u32) -> String {
    let table: HashMap<i64, &str> = [
        (libc::SYS_socket, "to open a network connection"),
        (libc::SYS_socketpair, "to open a network connection"),
        (libc::SYS_connect, "to open a network connection"),
        (libc::SYS_fork, "to start a process"),
        (libc::SYS_vfork, "to start a process"),
        (libc::SYS_clone, "to start a process"),
        (libc::SYS_execve, "to start a process"),
        (libc::SYS_execveat, "to start a process"),
        (libc::SYS_ptrace, "to trace a process"),
        (libc::SYS_process_vm_readv, "to read another process's memory"),
        (libc::SYS_process_vm_writev, "to write another process's memory"),
        (libc::SYS_memfd_create, "to make shared memory, which no limit of its own would count"),
        (libc::SYS_shmget, "to make shared memory, which no limit of its own would count"),
        (libc::SYS_msgget, "to make a message queue, which no limit of its own would count"),
        (libc::SYS_mq_open, "to make a message queue, which no limit of its own would count"),
    ]
    .into_iter()
    .collect();
    match table.get(&(nr as i64)) {
        Some(words) => format!("system call {nr}, {words}"),
        None => format!("system call {nr}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(t: &Tensor) -> Vec<f64> {
        Vec::<f64>::try_from(t.to_kind(Kind::Double).flatten(0, -1)).unwrap()
    }

    #[test]
    fn a_panic_is_placed_in_the_copy_of_the_students_file_and_nowhere_else() {
        assert_eq!(copy_file("f003.rs"), Some("f003.rs"));
        assert_eq!(copy_file("/tmp/run-1/u000/f012.rs"), Some("f012.rs"));
        for other in ["main.rs", "f03.rs", "f0003.rs", "fabc.rs", "/src/wrappers/tensor_generated.rs", "f003.rsx"] {
            assert_eq!(copy_file(other), None, "{other}");
        }
        assert_eq!(copy_place("at ./f001.rs:14:22").as_deref(), Some("f001.rs:14:22"));
        assert_eq!(copy_place("at /t/u000/f001.rs:7:5").as_deref(), Some("f001.rs:7:5"));
        assert_eq!(copy_place("at ./main.rs:14:22"), None);
        assert_eq!(copy_place("at ./f001.rs:x:22"), None);
        assert_eq!(copy_place("3: f001::attention"), None);
        // A real panic of this test's own code is not in a student's file: no place.
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(remember_panic_place));
        let nothing = std::hint::black_box(Option::<u8>::None);
        let _ = std::panic::catch_unwind(|| nothing.unwrap());
        std::panic::set_hook(previous);
        assert_eq!(PANIC_PLACE.with(|p| p.borrow_mut().take()), None);
    }

    #[test]
    fn the_canonical_path_reads_a_tensors_value_whatever_its_memory_or_layout() {
        let right = Tensor::from_slice(&[1.0f32, -2.0, 3.0, 4.0]).view([2, 2]);
        // A negated view: its memory holds the right numbers, its value is their negation.
        let negated = right.internal_neg_view();
        assert!(negated.is_neg());
        let read = canonical(&negated).unwrap();
        assert!(!read.is_neg() && read.is_contiguous());
        assert_eq!(values(&read), [-1.0, 2.0, -3.0, -4.0]);
        // Other layouts are made dense; a transposed view is read in its own order.
        for other in [right.to_sparse_sparse_dim(2), right.to_sparse_csr(None), right.g_to_mkldnn(None)] {
            assert_eq!(values(&canonical(&other).unwrap()), [1.0, -2.0, 3.0, 4.0]);
        }
        assert_eq!(values(&canonical(&right.tr()).unwrap()), [1.0, 3.0, -2.0, 4.0]);
        // What the grader does not read: a kind no check reads, an undefined tensor.
        let complex = Tensor::zeros([2], (Kind::ComplexFloat, Device::Cpu));
        assert_eq!(
            canonical(&complex).unwrap_err(),
            NotRecorded::Refused("returned a tensor of kind ComplexFloat, which no check reads".into())
        );
        // A nested tensor (rows of 3 and 4 numbers held as one) has no one shape: refused, saying what it is.
        let buffer = Tensor::arange(7, (Kind::Float, Device::Cpu));
        let sizes = Tensor::from_slice(&[3i64, 4]).view([2, 1]);
        let strides = Tensor::from_slice(&[1i64, 1]).view([2, 1]);
        let nested = buffer.internal_nested_view_from_buffer(&sizes, &strides, &Tensor::from_slice(&[0i64, 3]));
        assert!(transformer_anatomy::inspect::is_nested(&nested) && !transformer_anatomy::inspect::is_nested(&right));
        match canonical(&nested).unwrap_err() {
            NotRecorded::Refused(why) => assert!(why.starts_with("returned a nested tensor"), "{why}"),
            other => panic!("{other:?}"),
        }
        // One element repeated a trillion times (stride 0) is refused by its size before anything is made.
        let repeated = Tensor::zeros([1], (Kind::Float, Device::Cpu)).expand([1 << 20, 1 << 20], false);
        assert_eq!(canonical(&repeated).unwrap_err(), NotRecorded::TooLarge(4 << 40));
        assert!(NotRecorded::TooLarge(4 << 40).words().contains("over the 8 MiB the grader reads of one answer"));
    }

    #[test]
    fn the_judge_hands_out_an_answer_only_through_a_checks_gate() {
        load_replay(vec![Entry::Output(vec![])], None);
        let outside = std::panic::catch_unwind(replay::<f64>);
        if cfg!(debug_assertions) {
            assert!(outside.is_err());
        } else {
            let payload = outside.unwrap_err();
            assert!(payload.downcast_ref::<Stopped>().unwrap().0.contains("a bug in the grader"));
        }
        let inside = std::panic::catch_unwind(|| through_gate(replay::<f64>)).unwrap_err();
        // Inside the gate the entry is read: an empty answer is not a number.
        assert!(inside.downcast_ref::<Stopped>().unwrap().0.contains("cannot read"));
    }
}
