//! `anatomy exercises new`: a new exercise's files (anatomy_course::scaffold writes them).
use std::path::PathBuf;

use anatomy_course::scaffold::{new_exercise, NewExercise};
use anatomy_grade::progress::relative;
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// The exercise's name: its files are exercises/NAME.rs, solutions/NAME.rs, …
    name: String,
    /// The chapter that explains it: a file name of chapters/ without .md, e.g. 08-decoder-and-masking.
    #[arg(long)]
    chapter: String,
    /// What it asks, in a line (the list and the table show it).
    #[arg(long)]
    summary: String,
    /// The checks module (crates/checks/src/checks/MODULE.rs) that gets its check.
    #[arg(long)]
    module: String,
    /// The ids of the mistakes its check will name (comma-separated): one wrong answer each.
    #[arg(long, value_delimiter = ',', required = true)]
    mistakes: Vec<String>,
    /// The student function's arguments (comma-separated), each a &Tensor to begin with.
    #[arg(long, value_delimiter = ',', default_value = "x")]
    args: Vec<String>,
    #[arg(long, default_value_t = 5)]
    points: u32,
    /// The project to add it to (default: this one).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<bool> {
    let (name, chapter, summary, points, args, module, mistakes) =
        (a.name, a.chapter, a.summary, a.points, a.args, a.module, a.mistakes);
    let new = NewExercise { name, chapter, summary, points, args, module, mistakes };
    for file in new_exercise(&a.root.unwrap_or_else(anatomy_course::project_root), &new)? {
        println!("{}", relative(&file));
    }
    println!("written: fill in each part, then `cargo anatomy exercises table --write`");
    Ok(true)
}
