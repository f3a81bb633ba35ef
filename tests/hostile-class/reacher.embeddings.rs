//! expect: passed
//! Computes the embeddings right, but first looks for a way out of its own check's process: another
//! process's channels through /proc (the probe's parent holds the control channel, the seeds of the checks
//! to come and every other check's tape and output, all at descriptors 3 and above; what any process holds
//! at 0 to 2 is output the grader reads and throws away), another process's memory, a seed on its own
//! command line or in its environment. What it reaches, it names in a panic, which would fail this cell: it
//! must reach nothing, in either tier.
use std::os::unix::fs::OpenOptionsExt;
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

fn reachable() -> Vec<String> {
    let me = std::process::id();
    let mut pids: Vec<u32> = std::fs::read_dir("/proc")
        .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    pids.push(std::os::unix::process::parent_id());
    pids.sort();
    pids.dedup();
    let mut reached = Vec::new();
    for pid in pids.into_iter().filter(|&p| p != me) {
        for n in 3..64 {
            let path = format!("/proc/{pid}/fd/{n}");
            // O_NONBLOCK (2048): a pipe opened for reading must not wait for a writer.
            let open = |write: bool| std::fs::OpenOptions::new().read(!write).write(write).custom_flags(2048).open(&path);
            if open(true).is_ok() {
                reached.push(format!("{path} for writing"));
            }
            if open(false).is_ok() {
                reached.push(format!("{path} for reading"));
            }
        }
        let memory = format!("/proc/{pid}/mem");
        if std::fs::File::open(&memory).is_ok() {
            reached.push(memory);
        }
    }
    let own = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    if String::from_utf8_lossy(&own).contains("seed") {
        reached.push(format!("a seed on its command line: {:?}", String::from_utf8_lossy(&own)));
    }
    if std::env::vars().any(|(k, v)| k.to_lowercase().contains("seed") || v.contains("seed")) {
        reached.push("a seed in its environment".into());
    }
    reached
}

pub fn embeddings(
    input_ids: &Tensor,
    token_embeddings: &nn::Embedding,
    position_embeddings: &nn::Embedding,
    layer_norm: &nn::LayerNorm,
) -> Tensor {
    let reached = reachable();
    if !reached.is_empty() {
        panic!("reached outside its own check: {}", reached.join(", "));
    }
    let seq = input_ids.size()[1];
    let positions = Tensor::arange(seq, (Kind::Int64, input_ids.device())).unsqueeze(0);
    layer_norm.forward(&(token_embeddings.forward(input_ids) + position_embeddings.forward(&positions)))
}
