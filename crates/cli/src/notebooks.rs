//! `anatomy notebooks build`: chapters/*.md → notebooks/*.ipynb.
use std::path::PathBuf;

use anyhow::{bail, Result};
use transformer_anatomy::notebook::{chapter_notebooks, drift, notebook_json};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Write the notebook of every chapter whose cells changed (or, with --check, only report them).
    /// A notebook that differs only in outputs or metadata (run and saved in Jupyter) is left alone.
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
    let root = root.unwrap_or_else(|| PathBuf::from(env!("ANATOMY_PROJECT_ROOT")));
    let mut stale = vec![];
    for (chapter, notebook) in chapter_notebooks(&root)? {
        let markdown = std::fs::read_to_string(&chapter)?;
        let difference = match std::fs::read_to_string(&notebook) {
            Ok(text) => drift(&markdown, &text).unwrap_or_else(|e| Some(format!("{e:#}"))),
            Err(_) => Some("missing".to_string()),
        };
        let Some(difference) = difference else { continue };
        let wanted = notebook_json(&markdown);
        if check {
            stale.push(format!("{} ({difference})", notebook.display()));
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
