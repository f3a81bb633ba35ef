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
    print!("{runtime}");
    println!("CPU threads     {}", tch::get_num_threads());
    if runtime.unused_gpu() {
        problems.push(
            "there is a GPU but this LibTorch cannot use it: `make setup CUDA=1`, or build against a CUDA LibTorch \
             (docs/learners.md, Running on a GPU)"
                .to_string(),
        );
    }

    match resolve_model_dir(args.model.model) {
        Ok(dir) => {
            println!("model folder    {}", dir.display());
            match BertConfig::from_file(&dir, transformer_anatomy::EncoderOptions::bert()) {
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
