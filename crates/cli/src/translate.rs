//! `anatomy translate`: run a trained checkpoint on a text (`anatomy_tools::translate`
//! decodes; this file reads the arguments and prints).
use std::path::PathBuf;

use anatomy_tools::translate::{cross_attention_page, translate};
use anyhow::{Context, Result};
use tch::Device;
use transformer_anatomy::decoding::BeamOptions;
use transformer_anatomy::training::checkpoint::check_output_path;
use transformer_anatomy::training::load;

#[derive(clap::Args)]
pub struct Args {
    /// A model written by `anatomy train -o FILE`.
    #[arg(long, value_name = "FILE")]
    checkpoint: PathBuf,
    /// Beam width (1 = greedy decoding).
    #[arg(long, default_value_t = 1)]
    beam: usize,
    /// α of GNMT's length penalty ((5 + len) / 6)^α (0.6: the Transformer paper's); 0: log-probability alone.
    #[arg(long, default_value_t = 0.6)]
    length_penalty: f64,
    /// Recompute every position at every step instead of keeping the keys and values.
    #[arg(long)]
    no_cache: bool,
    /// Print {"input", "output", "tokens", "log_prob", "beams": [...]}.
    #[arg(long)]
    json: bool,
    /// Also write the encoder-decoder attention (output tokens × source tokens) as an HTML picture here.
    #[arg(long, value_name = "FILE")]
    attention: Option<PathBuf>,
    /// The text to translate, e.g. "the twenty-second of november 2026" for the dates task.
    text: String,
}

pub fn run(args: Args, device: Device) -> Result<()> {
    if let Some(path) = &args.attention {
        check_output_path(path)?;
    }
    let trained = load(&args.checkpoint, device)?;
    let options = BeamOptions {
        width: args.beam,
        length_penalty: args.length_penalty,
        max_new_tokens: trained.config.max_len - 1,
        use_cache: !args.no_cache,
    };
    let translation = translate(&trained, &args.text, options)?;
    if let Some(path) = &args.attention {
        let html = cross_attention_page(&trained, &args.text, &translation.ids)?;
        std::fs::write(path, html).with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&translation)?);
        return Ok(());
    }
    println!("{}", translation.output);
    println!("tokens {:?}  log-probability {:.4}", translation.tokens, translation.log_prob);
    for (i, b) in translation.beams.iter().enumerate().skip(1) {
        println!("beam {}: {}  (log-probability {:.4}, score {:.4})", i + 1, b.output, b.log_prob, b.score);
    }
    if let Some(path) = &args.attention {
        println!("wrote {}: the encoder-decoder attention, averaged over the heads of the last layer", path.display());
    }
    Ok(())
}
