//! expect: passed
//! Answers right, but first fills the private /tmp (in the bubblewrap tier) and makes what it wrote undeletable
//! for the probe's parent (same uid, no capabilities: no unlink in a directory without write permission).
//! A wipe that ignored errors let the files outlive this check (a reviewer's finding): every later EXIT said
//! tmp_full, and a later failure was reported as disk_limit ("wrote more than 256 MiB"), see
//! tmpkeep.layer_norm.rs, and a later check could read them, see tmpkeep.embeddings.rs. Now a check that
//! leaves anything in /tmp ends its probe, and the next runs in a fresh one.
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use tch::nn::{self, Module};
use tch::Tensor;

fn leave_behind() {
    let dir = std::path::Path::new("/tmp/keep");
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let _ = std::fs::write(dir.join("note"), b"left in /tmp by feed_forward's check process");
    let chunk = vec![7u8; 1 << 20];
    'files: for i in 0..8 {
        let Ok(mut f) = std::fs::File::create(dir.join(format!("fill{i}"))) else { break };
        // 60 MiB a file: under the 64 MiB RLIMIT_FSIZE (SIGXFSZ), until the tmpfs says ENOSPC.
        for _ in 0..60 {
            if f.write_all(&chunk).is_err() {
                break 'files;
            }
        }
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o500));
}

pub fn feed_forward(x: &Tensor, linear_1: &nn::Linear, linear_2: &nn::Linear) -> Tensor {
    leave_behind();
    linear_2.forward(&linear_1.forward(x).gelu("none"))
}
