//! `anatomy notebooks build`: chapters/*.md → notebooks/*.ipynb; `anatomy notebooks reset NAME`: the
//! learner's working copy in my-notebooks/ back as generated; `anatomy notebooks release`: the students'
//! version of a homework notebook (solutions cut to `todo!()`, with nbgrader's metadata and checksums:
//! `anatomy_exercises::platforms::nbgrader`).
use std::path::{Path, PathBuf};

use anatomy_exercises::platforms::nbgrader;
use anyhow::{bail, Context, Result};
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
    /// Write the students' version of every homework notebook (a chapter with nbgrader solution cells):
    /// each `// BEGIN SOLUTION` … `// END SOLUTION` region cut to `todo!()`, no outputs, nbgrader's
    /// metadata (schema 3) with its checksums, as `nbgrader generate_assignment` would release it.
    Release {
        /// Where to write NAME.ipynb (e.g. nbgrader's release/ASSIGNMENT/); default target/release-notebooks/.
        #[arg(long, value_name = "DIR", conflicts_with = "in_place")]
        out: Option<PathBuf>,
        /// Replace the homework's chapter and notebook in the project folder itself (the students' copy
        /// that `make handout` writes).
        #[arg(long)]
        in_place: bool,
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
    let (check, root) = match args.command {
        Command::Build { check, root } => (check, root),
        Command::Reset { name, root } => {
            return reset(&root.unwrap_or_else(|| PathBuf::from(env!("ANATOMY_PROJECT_ROOT"))), &name)
        }
        Command::Release { out, in_place, root } => {
            let root = root.unwrap_or_else(|| PathBuf::from(env!("ANATOMY_PROJECT_ROOT")));
            for path in nbgrader::release(&root, out, in_place)? {
                println!("wrote {}", path.display());
            }
            return Ok(());
        }
    };
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

/// Copies notebooks/NAME.ipynb over my-notebooks/NAME.ipynb, keeping the old copy as NAME.ipynb.old.
fn reset(root: &Path, name: &str) -> Result<()> {
    let generated: Vec<PathBuf> = std::fs::read_dir(root.join("notebooks"))
        .with_context(|| format!("no notebooks/ folder in {}", root.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ipynb"))
        .filter(|p| p.file_stem().is_some_and(|s| s.to_string_lossy().starts_with(name.trim_end_matches(".ipynb"))))
        .collect();
    let [source] = generated.as_slice() else {
        let names: Vec<String> = generated.iter().map(|p| p.file_name().unwrap().to_string_lossy().into()).collect();
        bail!(
            "{name:?} names {} notebooks{}: give one of notebooks/*.ipynb, e.g. `anatomy notebooks reset 03`",
            names.len(),
            if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) }
        );
    };
    let mine = root.join("my-notebooks");
    std::fs::create_dir_all(&mine).with_context(|| format!("cannot create {}", mine.display()))?;
    let copy = mine.join(source.file_name().unwrap());
    if copy.exists() {
        let old = copy.with_extension("ipynb.old");
        std::fs::rename(&copy, &old).with_context(|| format!("cannot keep {} as {}", copy.display(), old.display()))?;
        println!("kept your copy as {}", old.display());
    }
    // Written beside, then renamed: never a half-written notebook.
    let partial = copy.with_extension("ipynb.partial");
    std::fs::copy(source, &partial).with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, &copy)?;
    println!("{} is as generated again (reload it in JupyterLab)", copy.display());
    Ok(())
}
