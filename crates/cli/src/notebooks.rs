//! `anatomy notebooks build`: chapters/*.md → notebooks/*.ipynb; `chapter-map`: the chapters' headers → the
//! copies of their map; `reset NAME`: the learner's working copy in my-notebooks/ back as generated; `release`:
//! a homework notebook as students get it (nbgrader's checksums and all) or, `--source`, as instructors keep
//! it, solutions in (`anatomy_platforms::nbgrader`).
use std::path::{Path, PathBuf};

use anatomy_notebooks::{build, chapter_map, reset_copy};
use anatomy_platforms::nbgrader;
use anyhow::{bail, Result};

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
    /// Write README.md's chapter table, docs/contributors.md's "The chapter, file by file" and src/lib.rs's
    /// module comments from the chapters' `*Code: … · tests: …*` headers (after changing one).
    ChapterMap {
        /// Write them; without it, change nothing and exit 1 if one differs from what the headers make.
        #[arg(long)]
        write: bool,
    },
    /// Write the students' version of every homework notebook (a chapter with nbgrader solution cells): no
    /// outputs, nbgrader's metadata (schema 3) and checksums, as `nbgrader generate_assignment` releases it.
    Release {
        /// Where to write NAME.ipynb (e.g. nbgrader's release/ASSIGNMENT/); default target/release-notebooks/.
        #[arg(long, value_name = "DIR", conflicts_with = "in_place")]
        out: Option<PathBuf>,
        /// Replace the homework's chapter and notebook here (the students' copy that `make handout` writes).
        #[arg(long)]
        in_place: bool,
        /// The instructors' version instead (nbgrader's source/ASSIGNMENT/; default target/source-notebooks/):
        /// each solution cell's todo!() filled in from solutions/, between nbgrader's solution markers.
        #[arg(long, conflicts_with = "in_place")]
        source: bool,
        /// The project folder (default: this crate's).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// Put back your working copy of a notebook (my-notebooks/NAME.ipynb, which `make notebooks` opens)
    /// as notebooks/ holds it; your edited copy is kept beside it as NAME.ipynb.old.
    Reset {
        /// The notebook, e.g. `03-multi-head-attention` or just `03`.
        name: String,
        /// The project folder (default: this crate's).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
}

pub fn run(args: Args) -> Result<()> {
    let here = |root: Option<PathBuf>| root.unwrap_or_else(transformer_anatomy::project::project_root);
    let (written, stale, fix) = match args.command {
        Command::Build { check, root } => {
            let (written, stale) = build(&here(root), check)?;
            (written, stale, "notebooks build")
        }
        Command::ChapterMap { write: true } => (chapter_map(&here(None), true)?, vec![], ""),
        Command::ChapterMap { write: false } => {
            let stale = chapter_map(&here(None), false)?.iter().map(|p| p.display().to_string()).collect();
            (vec![], stale, "notebooks chapter-map --write")
        }
        Command::Reset { name, root } => return reset(&here(root), &name),
        Command::Release { out, in_place, source, root } => {
            let root = here(root);
            (if source { nbgrader::source(&root, out)? } else { nbgrader::release(&root, out, in_place)? }, vec![], "")
        }
    };
    written.iter().for_each(|path| println!("wrote {}", path.display()));
    if !stale.is_empty() {
        bail!("out of date (run `cargo anatomy {fix}`): {}", stale.join(", "));
    }
    Ok(())
}

/// Copies notebooks/NAME.ipynb over my-notebooks/NAME.ipynb, keeping the old copy as NAME.ipynb.old.
fn reset(root: &Path, name: &str) -> Result<()> {
    let (copy, kept) = reset_copy(root, name)?;
    if let Some(old) = kept {
        println!("kept your copy as {}", old.display());
    }
    println!("{} is as generated again (reload it in JupyterLab)", copy.display());
    Ok(())
}
