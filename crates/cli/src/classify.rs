//! `anatomy classify`: chapter 12's spam filter. `prepare` turns the corpus set-up fetched into the
//! labelled examples and their one split (`.deps/spam-assassin/examples.jsonl`).
use std::path::PathBuf;

use anyhow::Result;
use transformer_anatomy::classify::data::{self, LABELS};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Decode the corpus (`make setup` fetches it) into labelled examples: Subject and plain-text body,
    /// copies dropped, one seeded 80/10/10 split stratified by label; writes DIR/examples.jsonl.
    Prepare {
        /// The corpus folder (raw.jsonl in, examples.jsonl out) [default: .deps/spam-assassin, or
        /// $ANATOMY_SPAM_DIR].
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Print the counts as JSON: `{"raw": {group: n}, "duplicates", "parts": {part: [ham, spam]}}`.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        Command::Prepare { dir, json } => {
            let dir = dir.unwrap_or_else(data::data_dir);
            let raw = data::read_raw(&dir.join("raw.jsonl"))?;
            let (examples, counts) = data::prepare(&raw)?;
            let out = dir.join("examples.jsonl");
            data::write_examples(&out, &examples)?;
            if json {
                println!("{}", serde_json::to_string(&counts)?);
            } else {
                let raw_total: usize = counts.raw.values().sum();
                println!(
                    "{raw_total} messages, {} dropped as copies of an earlier Subject and body",
                    counts.duplicates
                );
                for (part, [ham, spam]) in &counts.parts {
                    println!("  {part:<10} {:>5} {}, {:>5} {}", ham, LABELS[0], spam, LABELS[1]);
                }
                println!("wrote {} examples to {}", examples.len(), out.display());
            }
            Ok(())
        }
    }
}
