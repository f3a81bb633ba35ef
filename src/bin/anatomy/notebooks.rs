//! `anatomy notebooks build`: chapters/*.md → notebooks/*.ipynb.
use std::path::PathBuf;

use anyhow::{bail, Result};
use transformer_anatomy::notebook::{chapter_notebooks, notebook_json};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Write one notebook per chapter file (or, with --check, only report the ones that are out of date).
    Build {
        /// Change nothing; exit 1 if a notebook differs from what its chapter makes.
        #[arg(long)]
        check: bool,
        /// The project folder (default: this crate's).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
}

pub fn run(args: Args) -> Result<()> {
    let Command::Build { check, root } = args.command;
    let root = root.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    let mut stale = vec![];
    for (chapter, notebook) in chapter_notebooks(&root)? {
        let wanted = notebook_json(&std::fs::read_to_string(&chapter)?);
        if std::fs::read_to_string(&notebook).ok().as_deref() == Some(wanted.as_str()) {
            continue;
        }
        if check {
            stale.push(notebook.display().to_string());
        } else {
            std::fs::write(&notebook, wanted)?;
            println!("wrote {}", notebook.display());
        }
    }
    if !stale.is_empty() {
        bail!("out of date (run `anatomy notebooks build`): {}", stale.join(", "));
    }
    Ok(())
}
