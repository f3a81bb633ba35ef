//! The tape's wire format, declared once for the two sides that speak it: the probe that writes it, inside
//! a student's program (`anatomy_checks::probe` and `anatomy_checks::tape`), and the grader that reads it
//! in its own process (`anatomy_intake::tape`, bounded and fuzzed, and `anatomy_grade::grading::run`).
//!
//! A channel is a stream of frames: a tag byte, a little-endian `u32` length, then that many bytes of
//! payload. Each check runs in a process of its own, which writes to a channel of its own, so a frame never
//! names the check it belongs to: the channel does. The probe's parent process, which runs no student
//! code, reports on a control channel of its own when each check starts and how its process ended.

/// One check's channel: a student's function returned (payload: safetensors, see [`Value`]).
pub const OUTPUT: u8 = b'O';
/// One check's channel: a student's function panicked (payload: the panic's text).
pub const PANIC: u8 = b'P';
/// One check's channel, just before a [`PANIC`]: where in the student's file it happened (payload: `L`
/// and `FILE:LINE:COLUMN` for the panic's own line, or `C` and the line of the student's call that a
/// panic in a library — a LibTorch error in `tch` — came from), the file as the probe's copy names it.
pub const PANIC_AT: u8 = b'A';
/// One check's channel: a student's function returned something the probe's canonical path will not
/// record (payload: why, in words naming the layout, kind or limit).
pub const REFUSED: u8 = b'R';
/// One check's channel: the check ran to its end in the probe (empty payload).
pub const DONE: u8 = b'D';
/// One check's channel: the sandbox stopped a system call (payload: its number, `u32`), as the process
/// itself reports it just before it is ended by the same signal.
pub const SYSCALL: u8 = b'X';

/// The control channel: check `k` has started in a fresh process (payload: `k` and that process's pid as
/// the parent sees it, two `u32`s).
pub const START: u8 = b'S';
/// The control channel: check `k`'s process ended (payload: [`Exit`]).
pub const EXIT: u8 = b'E';
/// The control channel: the probe ends here, and the next check runs in a fresh probe (empty payload): the
/// check before left something in the private `/tmp`, which each check must find empty.
pub const FRESH: u8 = b'F';

/// The probe's set-up channel (grader to probe): a seccomp program for each check's process (payload:
/// `struct sock_filter` entries, 8 bytes each).
pub const FILTER: u8 = b'B';
/// The probe's set-up channel: the probe has a private `/tmp`, which each check must find empty (empty
/// payload): a check that leaves anything there is the probe's last, and the next one runs in a fresh
/// probe with a fresh `/tmp`.
pub const PRIVATE_TMP: u8 = b'W';
/// The probe's set-up channel: each check's CPU-time limit in seconds (payload: `u64`).
pub const CPU_SECONDS: u8 = b'C';

/// The largest frame the grader reads: far above any check's answers, far below what would hurt.
pub const MAX_FRAME: usize = 8 << 20;
/// The most a check's answers may take on its channel, all frames together.
pub const MAX_RECORD: usize = 16 << 20;
/// The most frames the grader reads of one check's channel. The bytes alone do not bound what the grader
/// keeps: an empty frame takes 5 bytes of the record, and the grader keeps an entry for each, so 16 MiB of
/// empty frames once made 3.3 million entries. Each call of a student's function writes one answer, and no
/// check calls one more than a few hundred times.
pub const MAX_FRAMES: usize = 4096;
/// The most tensors one answer holds, and axes one tensor has (the checks need 3 and 4).
pub const MAX_TENSORS: usize = 8;
pub const MAX_AXES: usize = 8;

/// A frame's bytes: tag, length, payload.
pub fn frame(tag: u8, payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(payload.len() + 5);
    bytes.push(tag);
    bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// How a check's process ended, as its parent saw it (`waitpid`), and how full the probe's `/tmp` was
/// then. Written by the probe's parent, which runs no student code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    pub check: u32,
    /// The raw wait status (`WIFEXITED`, `WTERMSIG`, …).
    pub status: i32,
    /// Bytes in use in the probe's private `/tmp` when the process ended, and its size (0 and 0 where the
    /// probe has none).
    pub tmp_used: u64,
    pub tmp_size: u64,
}

impl Exit {
    pub const LEN: usize = 24;

    pub fn to_bytes(self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[0..4].copy_from_slice(&self.check.to_le_bytes());
        b[4..8].copy_from_slice(&self.status.to_le_bytes());
        b[8..16].copy_from_slice(&self.tmp_used.to_le_bytes());
        b[16..24].copy_from_slice(&self.tmp_size.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8]) -> Option<Exit> {
        let b: &[u8; Self::LEN] = b.try_into().ok()?;
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Some(Exit { check: u32_at(0), status: u32_at(4) as i32, tmp_used: u64_at(8), tmp_size: u64_at(16) })
    }

    /// The signal that ended the process, if one did.
    pub fn signal(self) -> Option<i32> {
        let low = self.status & 0x7f;
        (low != 0 && low != 0x7f).then_some(low)
    }

    /// The exit code, if the process exited.
    pub fn code(self) -> Option<i32> {
        (self.status & 0x7f == 0).then_some((self.status >> 8) & 0xff)
    }

    /// Whether the `/tmp` it could write was (all but) full: less than 64 KiB left.
    pub fn tmp_full(self) -> bool {
        self.tmp_size > 0 && self.tmp_used + (64 << 10) >= self.tmp_size
    }
}

/// The `u32` a SYSCALL frame carries.
pub fn number(payload: &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(payload.try_into().ok()?))
}

/// A START frame's payload: the check and its process's pid.
pub fn start(check: u32, pid: u32) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&check.to_le_bytes());
    b[4..].copy_from_slice(&pid.to_le_bytes());
    b
}

/// The check and pid a START frame carries.
pub fn started(payload: &[u8]) -> Option<(u32, u32)> {
    let b: &[u8; 8] = payload.try_into().ok()?;
    Some((number(&b[..4])?, number(&b[4..])?))
}

/// The element types a recorded tensor may have (the safetensors names the tape uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    Bool,
    U8,
    I8,
    I16,
    I32,
    I64,
    F16,
    BF16,
    F32,
    F64,
}

impl Dtype {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::Bool | Dtype::U8 | Dtype::I8 => 1,
            Dtype::I16 | Dtype::F16 | Dtype::BF16 => 2,
            Dtype::I32 | Dtype::F32 => 4,
            Dtype::I64 | Dtype::F64 => 8,
        }
    }
}

/// One recorded tensor, as the grader read it off the tape: dense, row-major, little-endian bytes, exactly
/// `shape`'s product of elements of `dtype`.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub bytes: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exit_reads_back_and_says_how_the_process_ended() {
        let exited = Exit { check: 7, status: 3 << 8, tmp_used: 5, tmp_size: 9 };
        assert_eq!(Exit::from_bytes(&exited.to_bytes()), Some(exited));
        assert_eq!((exited.code(), exited.signal()), (Some(3), None));
        let killed = Exit { status: 9, ..exited };
        assert_eq!((killed.code(), killed.signal()), (None, Some(9)));
        let dumped = Exit { status: 6 | 0x80, ..exited };
        assert_eq!(dumped.signal(), Some(6));
        assert!(Exit { tmp_used: 256 << 20, tmp_size: 256 << 20, ..exited }.tmp_full());
        assert!(!Exit { tmp_used: 1 << 20, tmp_size: 256 << 20, ..exited }.tmp_full());
        assert!(!Exit { tmp_used: 0, tmp_size: 0, ..exited }.tmp_full());
        assert_eq!(Exit::from_bytes(&[0; 23]), None);
    }

    #[test]
    fn a_frame_is_its_tag_a_little_endian_length_and_its_payload() {
        assert_eq!(frame(OUTPUT, b"abc"), [b'O', 3, 0, 0, 0, b'a', b'b', b'c']);
        assert_eq!(frame(DONE, &[]), [b'D', 0, 0, 0, 0]);
        let long = frame(PANIC, &[7; 0x0102]);
        assert_eq!((long.len(), &long[..5]), (0x0102 + 5, &[b'P', 0x02, 0x01, 0, 0][..]));
        // Each tag is one byte of its own: a reader tells every frame apart by it.
        let tags = [OUTPUT, PANIC, REFUSED, DONE, SYSCALL, START, EXIT, FRESH, FILTER, PRIVATE_TMP, CPU_SECONDS];
        let distinct: std::collections::BTreeSet<u8> = tags.into_iter().collect();
        assert_eq!(distinct.len(), tags.len());
    }

    #[test]
    fn a_start_payload_and_a_syscall_number_read_back_and_a_wrong_length_is_none() {
        let payload = start(3, 0x0102_0304);
        assert_eq!(payload, [3, 0, 0, 0, 4, 3, 2, 1]);
        assert_eq!(started(&payload), Some((3, 0x0102_0304)));
        assert_eq!((started(&payload[..7]), started(&[0; 9])), (None, None));
        assert_eq!(number(&[0x3b, 0, 0, 0]), Some(59));
        assert_eq!((number(&[1, 0, 0]), number(&[0; 5])), (None, None));
        // The raw wait status of a stopped process (0x7f in the low byte) is neither a signal nor an exit.
        let stopped = Exit { check: 0, status: (19 << 8) | 0x7f, tmp_used: 0, tmp_size: 0 };
        assert_eq!((stopped.code(), stopped.signal()), (None, None));
        let exited = Exit { status: 0, ..stopped };
        assert_eq!((exited.code(), exited.signal()), (Some(0), None));
        // Just under 64 KiB left is full; 64 KiB and one byte left is not.
        let size = 1 << 20;
        assert!(Exit { tmp_used: size - (64 << 10), tmp_size: size, ..stopped }.tmp_full());
        assert!(!Exit { tmp_used: size - (64 << 10) - 1, tmp_size: size, ..stopped }.tmp_full());
    }

    #[test]
    fn each_element_type_has_its_width_in_bytes() {
        let widths: Vec<usize> = [
            Dtype::Bool,
            Dtype::U8,
            Dtype::I8,
            Dtype::I16,
            Dtype::F16,
            Dtype::BF16,
            Dtype::I32,
            Dtype::F32,
            Dtype::I64,
            Dtype::F64,
        ]
        .map(Dtype::size)
        .to_vec();
        assert_eq!(widths, [1, 1, 1, 2, 2, 2, 4, 4, 8, 8]);
    }
}
