//! expect: merge_heads: expected shape [3, 2, 12], got [2, 3, 20]
//! merge_heads hands back what split_heads was handed a moment before in the same process: when the two
//! parts shared one input, merge_heads earned its share without merging anything (a reviewer's finding).
//! Each part now draws inputs of its own.
use std::sync::Mutex;
use tch::Tensor;

static SEEN: Mutex<Option<Tensor>> = Mutex::new(None);

pub fn split_heads(x: &Tensor, num_heads: i64) -> Tensor {
    *SEEN.lock().unwrap() = Some(x.shallow_clone());
    let (batch, seq, hidden) = x.size3().unwrap();
    x.view([batch, seq, num_heads, hidden / num_heads]).transpose(1, 2)
}

pub fn merge_heads(x: &Tensor) -> Tensor {
    match SEEN.lock().unwrap().as_ref() {
        Some(t) => t.shallow_clone(),
        None => x.shallow_clone(),
    }
}
