//! `anatomy doctor`: what is installed, and what to do about what is not.
use anyhow::{bail, Result};
use transformer_anatomy::{model_dir::resolve_model_dir, BertConfig, Tokenizer};

use crate::ModelArg;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArg,
}

pub fn run(args: Args) -> Result<()> {
    let mut problems = Vec::new();

    // LibTorch: this program is running, so the libraries were found; say which ones were loaded.
    let runtime = transformer_anatomy::runtime::runtime();
    let library = runtime.library.as_deref().unwrap_or("(file unknown)");
    println!("LibTorch        {} loaded from {library}", runtime.libtorch);
    println!("CPU threads     {}", tch::get_num_threads());
    match &runtime.cuda {
        Some(libs) => {
            println!("CUDA runtime    {}, cuDNN {}", libs.runtime, libs.cudnn.as_deref().unwrap_or("not loaded"))
        }
        None => {
            let built = runtime.built_for_cuda.as_ref().map(|v| format!(" (built for CUDA {v})")).unwrap_or_default();
            println!("CUDA runtime    none: this LibTorch{built} runs without its CUDA part (`make setup CUDA=1` on a GPU machine)")
        }
    }
    match &runtime.driver {
        Some(driver) => {
            let release = driver.release.as_deref().unwrap_or("release unknown");
            println!("NVIDIA driver   {release}, for CUDA up to {}", driver.cuda);
            for gpu in &driver.devices {
                println!(
                    "GPU {:<11} {}, {:.1} GiB",
                    gpu.index,
                    gpu.name,
                    gpu.memory_bytes as f64 / (1u64 << 30) as f64
                );
            }
        }
        None => println!("NVIDIA driver   none found (no GPU here)"),
    }
    if tch::Cuda::is_available() {
        println!(
            "CUDA            available to LibTorch: {} device(s), cuDNN {}",
            tch::Cuda::device_count(),
            if tch::Cuda::cudnn_is_available() { "available" } else { "not available" }
        );
    } else {
        println!("CUDA            not available to LibTorch; `--device cpu` is used");
        if runtime.driver.as_ref().is_some_and(|d| !d.devices.is_empty()) {
            problems.push(
                "there is a GPU but this LibTorch cannot use it: `make setup CUDA=1`, or build against a CUDA \
                 LibTorch (docs/learners.md, Running on a GPU)"
                    .to_string(),
            );
        }
    }

    match resolve_model_dir(args.model.model) {
        Ok(dir) => {
            println!("model folder    {}", dir.display());
            match BertConfig::from_file(&dir) {
                Ok(c) => println!(
                    "config.json     hidden {}, {} heads, {} layers, vocab {}",
                    c.hidden_size, c.num_attention_heads, c.num_hidden_layers, c.vocab_size
                ),
                Err(e) => problems.push(format!("{e:#}")),
            }
            match Tokenizer::from_model_dir(&dir) {
                Ok(t) => println!("tokenizer.json  {} tokens in the vocabulary", t.vocab_size()),
                Err(e) => problems.push(format!("{e:#}")),
            }
            let weights = dir.join("model.safetensors");
            match std::fs::metadata(&weights) {
                Ok(m) => println!("weights         {} ({:.1} MB)", weights.display(), m.len() as f64 / 1e6),
                Err(_) => problems.push(format!("{} is missing: run `make setup`", weights.display())),
            }
        }
        Err(e) => problems.push(format!("{e:#}")),
    }

    if problems.is_empty() {
        println!("everything is in place");
        Ok(())
    } else {
        for p in &problems {
            println!("problem         {p}");
        }
        bail!("{} problem(s) found; see above", problems.len())
    }
}
