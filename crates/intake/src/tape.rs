//! The tape as the grader reads it: frames off a pipe that a student's process writes, and the tensors a
//! frame carries. Everything on a check's channel is the student's bytes — their code shares the process
//! that writes it, and can write it itself — so both readers are bounded: a frame's length is checked
//! against [`MAX_FRAME`] before anything is allocated, and a payload is parsed by the safetensors crate,
//! whose reader rejects malformed input, then held to the format's own promises (dense, exactly the
//! bytes its shape and element type need, the names `0`, `1`, … in order). The wire format itself is
//! declared once, in `anatomy_course::wire`.
use std::io::{ErrorKind, Read};

use anatomy_course::wire::{Dtype, Value, MAX_AXES, MAX_FRAME, MAX_FRAMES, MAX_TENSORS};

/// A frame as read from a channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub tag: u8,
    pub payload: Vec<u8>,
}

/// Why a channel could not be read on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Broken {
    /// A frame's header claims more than [`MAX_FRAME`] bytes (nothing of it was read).
    TooLarge(u64),
    /// More than [`MAX_FRAMES`] frames on one channel (the rest is not read).
    TooMany,
    /// The channel ended inside a frame.
    Truncated,
    /// The pipe could not be read (not the student's doing).
    Io(String),
}

impl Broken {
    /// What happened, as the end of a sentence whose subject is the student's code.
    pub fn words(&self) -> String {
        match self {
            Broken::TooLarge(n) => format!(
                "sent the grader an answer of {} MiB, over the {} MiB the grader reads of one answer",
                n.div_ceil(1 << 20),
                MAX_FRAME >> 20
            ),
            Broken::TooMany => format!("sent the grader more than {MAX_FRAMES} answers for one check, its limit"),
            Broken::Truncated => "ended in the middle of writing an answer to the grader".into(),
            Broken::Io(e) => format!("left a channel the grader could not read ({e})"),
        }
    }
}

/// The next frame of `reader`: `Ok(None)` at a clean end (between frames). At most [`MAX_FRAME`] bytes
/// are allocated, whatever the header says.
pub fn read_frame(reader: &mut impl Read) -> Result<Option<Frame>, Broken> {
    let mut head = [0u8; 5];
    let mut got = 0;
    while got < head.len() {
        match reader.read(&mut head[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(Broken::Truncated),
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(Broken::Io(e.to_string())),
        }
    }
    let len = u32::from_le_bytes(head[1..5].try_into().expect("4 bytes")) as usize;
    if len > MAX_FRAME {
        return Err(Broken::TooLarge(len as u64));
    }
    let mut payload = vec![0u8; len];
    reader.read_exact(&mut payload).map_err(|e| match e.kind() {
        ErrorKind::UnexpectedEof => Broken::Truncated,
        _ => Broken::Io(e.to_string()),
    })?;
    Ok(Some(Frame { tag: head[0], payload }))
}

/// A channel read frame by frame, at most [`MAX_FRAMES`] of them: past that, [`Broken::TooMany`], so that
/// what the grader keeps of a channel is bounded by its count of frames as well as by their bytes.
pub struct Frames<R> {
    reader: R,
    read: usize,
}

impl<R: Read> Frames<R> {
    pub fn new(reader: R) -> Self {
        Frames { reader, read: 0 }
    }

    /// The next frame ([`read_frame`]), or [`Broken::TooMany`] for the one past the limit.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, Broken> {
        let frame = read_frame(&mut self.reader)?;
        if frame.is_some() {
            self.read += 1;
            if self.read > MAX_FRAMES {
                return Err(Broken::TooMany);
            }
        }
        Ok(frame)
    }

    /// The reader, to drain what is left unread.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

/// The tensors an OUTPUT frame carries, in order, or why they cannot be read (said to the student).
pub fn values(payload: &[u8]) -> Result<Vec<Value>, String> {
    use safetensors::tensor::{Dtype as St, SafeTensors};
    let unreadable = |why: &str| Err(format!("an answer the grader cannot read ({why})"));
    let Ok(file) = SafeTensors::deserialize(payload) else { return unreadable("not a safetensors record") };
    if file.len() > MAX_TENSORS {
        return unreadable(&format!("more than {MAX_TENSORS} tensors"));
    }
    let mut named: Vec<(usize, Value)> = Vec::new();
    for (name, view) in file.tensors() {
        if view.shape().len() > MAX_AXES {
            return unreadable(&format!("a tensor of more than {MAX_AXES} axes"));
        }
        let Ok(index) = name.parse::<usize>() else { return unreadable("a tensor not named by its place") };
        let dtype = match view.dtype() {
            St::BOOL => Dtype::Bool,
            St::U8 => Dtype::U8,
            St::I8 => Dtype::I8,
            St::I16 => Dtype::I16,
            St::I32 => Dtype::I32,
            St::I64 => Dtype::I64,
            St::F16 => Dtype::F16,
            St::BF16 => Dtype::BF16,
            St::F32 => Dtype::F32,
            St::F64 => Dtype::F64,
            other => return unreadable(&format!("element type {other:?}")),
        };
        let shape = view.shape().to_vec();
        let elements = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        let needed = elements.and_then(|n| n.checked_mul(dtype.size()));
        if needed != Some(view.data().len()) {
            return unreadable("its bytes do not match its shape");
        }
        named.push((index, Value { dtype, shape, bytes: view.data().to_vec() }));
    }
    named.sort_by_key(|(i, _)| *i);
    if named.iter().enumerate().any(|(i, (j, _))| i != *j) {
        return unreadable("its tensors are not numbered 0, 1, … in order");
    }
    Ok(named.into_iter().map(|(_, v)| v).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use anatomy_course::wire::{frame, OUTPUT};

    #[test]
    fn frames_are_read_whole_and_a_claimed_size_is_checked_before_anything_is_allocated() {
        let mut bytes = frame(OUTPUT, b"abc");
        bytes.extend(frame(b'D', b""));
        let mut reader = bytes.as_slice();
        assert_eq!(read_frame(&mut reader), Ok(Some(Frame { tag: OUTPUT, payload: b"abc".to_vec() })));
        assert_eq!(read_frame(&mut reader), Ok(Some(Frame { tag: b'D', payload: vec![] })));
        assert_eq!(read_frame(&mut reader), Ok(None));
        let huge = [b'O', 0xff, 0xff, 0xff, 0xff];
        assert_eq!(read_frame(&mut huge.as_slice()), Err(Broken::TooLarge(u32::MAX as u64)));
        assert!(Broken::TooLarge(9 << 20).words().contains("9 MiB") && Broken::TooLarge(1).words().contains("8 MiB"));
        assert_eq!(read_frame(&mut [b'O', 3, 0].as_slice()), Err(Broken::Truncated));
        assert_eq!(read_frame(&mut [b'O', 3, 0, 0, 0, 1].as_slice()), Err(Broken::Truncated));
    }

    #[test]
    fn a_channel_gives_at_most_max_frames_frames() {
        let empty = frame(OUTPUT, b"");
        let bytes: Vec<u8> = std::iter::repeat_n(empty.as_slice(), MAX_FRAMES + 2).flatten().copied().collect();
        let mut frames = Frames::new(bytes.as_slice());
        for _ in 0..MAX_FRAMES {
            assert_eq!(frames.next_frame(), Ok(Some(Frame { tag: OUTPUT, payload: vec![] })));
        }
        assert_eq!(frames.next_frame(), Err(Broken::TooMany));
        assert!(Broken::TooMany.words().contains(&format!("more than {MAX_FRAMES} answers")));
        let few: Vec<u8> = std::iter::repeat_n(empty.as_slice(), 3).flatten().copied().collect();
        let mut frames = Frames::new(few.as_slice());
        assert!((0..3).all(|_| frames.next_frame().unwrap().is_some()) && frames.next_frame() == Ok(None));
    }

    #[test]
    fn a_payload_must_be_exactly_what_its_shapes_say() {
        use safetensors::tensor::{serialize, Dtype as St, TensorView};
        let data = [0u8; 24];
        let views = vec![
            ("1".to_string(), TensorView::new(St::I64, vec![1], &data[..8]).unwrap()),
            ("0".to_string(), TensorView::new(St::F32, vec![2, 2], &data[8..]).unwrap()),
        ];
        let bytes = serialize(views, &None).unwrap();
        let read = values(&bytes).unwrap();
        assert_eq!((read[0].dtype, read[0].shape.as_slice(), read[1].dtype), (Dtype::F32, &[2, 2][..], Dtype::I64));
        let gap = vec![("1".to_string(), TensorView::new(St::F32, vec![1], &data[..4]).unwrap())];
        assert!(values(&serialize(gap, &None).unwrap()).unwrap_err().contains("numbered"));
        assert!(values(b"not a record").is_err());
    }
}
