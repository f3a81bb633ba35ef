//! `anatomy exercises new`: a new exercise's table in the declaration and its files (anatomy_course::scaffold).
use anatomy_course::scaffold::{new_exercise, NewExercise};

#[derive(clap::Args)]
pub struct Args {
    /// The exercise's name: its files are exercises/NAME.rs, solutions/NAME.rs, …
    name: String,
    /// The exercise it comes after in the course: its table goes below that one's (default: last).
    #[arg(long, value_name = "OTHER")]
    after: Option<String>,
    /// The chapter that explains it: a file name of chapters/ without .md, e.g. 08-decoder-and-masking.
    #[arg(long)]
    chapter: String,
    /// What it asks, in a line (the list and the table show it).
    #[arg(long)]
    summary: String,
    /// The checks module (crates/checks/src/checks/MODULE.rs) that gets its check.
    #[arg(long)]
    module: String,
    /// The ids of the mistakes its check will name (comma-separated, two or more): one wrong answer each.
    #[arg(long, value_delimiter = ',', required = true)]
    mistakes: Vec<String>,
    /// What it forbids, by family (comma-separated: attention, norms, cross_entropy): a shortcut is written.
    #[arg(long, value_delimiter = ',')]
    forbids: Vec<String>,
    /// The student function's arguments (comma-separated), each a &Tensor to begin with.
    #[arg(long, value_delimiter = ',', default_value = "x")]
    args: Vec<String>,
    /// What it is worth, unless the course file (exercises/course.toml) says otherwise.
    #[arg(long, default_value_t = 5)]
    points: u32,
    /// The project to add it to (default: this one).
    #[arg(long, value_name = "DIR")]
    root: Option<std::path::PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<bool> {
    let Args { name, after, chapter, summary, module, mistakes, forbids, args, points, root } = a;
    let new = NewExercise { name, after, chapter, summary, points, args, module, mistakes, forbids };
    let files = new_exercise(&root.unwrap_or_else(anatomy_course::project_root), &new)?;
    files.iter().for_each(|file| println!("{}", anatomy_grade::progress::relative(file)));
    println!("written: fill in each part, then `cargo anatomy exercises table --write`");
    Ok(true)
}
