//! What a notebook's kernel runs of this crate beyond the chapter's steps: the line the set-up cell prints
//! (which LibTorch, which device and threads, which model) and what the Stop button does. The notebooks
//! themselves are made from the chapters by `anatomy-notebooks` (`crates/notebooks/`), outside this crate.

/// The set-up cell's output: which LibTorch, on which device, which model the notebooks read, and what
/// Stop does.
pub fn ready_line() -> String {
    let version = crate::runtime::libtorch_version();
    let device = if tch::Cuda::is_available() { "CUDA" } else { "CPU" };
    let model = crate::model_dir::resolve_model_dir(None)
        .and_then(|dir| {
            let c = crate::config::BertConfig::from_file(&dir, crate::config::EncoderOptions::bert())?;
            let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Ok(format!(
                "{name} (hidden {}, {} heads, {} layers)",
                c.hidden_size, c.num_attention_heads, c.num_hidden_layers
            ))
        })
        .unwrap_or_else(|e| format!("missing ({e:#})"));
    // scripts/kernel.py sets GOMP_SPINCOUNT for the kernel: how long a LibTorch thread spins at a barrier
    // before it sleeps, which decides how a notebook fares beside a busy program.
    let spin = std::env::var("GOMP_SPINCOUNT")
        .map(|n| format!("GOMP_SPINCOUNT={n}"))
        .unwrap_or_else(|_| "libgomp's spin count".into());
    format!(
        "ready: LibTorch {version} on the {device}, {} threads ({spin}) · model {model}\n{STOP_NOTE}",
        tch::get_num_threads()
    )
}

/// What the Stop button does in this kernel, printed under the ready line: evcxr answers an interrupt by
/// ending the Rust process that holds the notebook's variables (even when no cell runs) and starting a
/// fresh one, so the variables are gone; no evcxr setting keeps them.
pub const STOP_NOTE: &str = "note: Stop (■) restarts this kernel's Rust process and forgets every variable, \
even when no cell runs;\n      Run ▸ Run All Above Selected Cell brings them back.";
