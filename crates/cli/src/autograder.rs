//! `anatomy exercises autograder`: a course platform's files (Gradescope's zip, PrairieLearn's image and
//! question, GitHub Classroom's reporter output) and the command a grading container runs. The formats are
//! `anatomy_platforms`; this file turns arguments into their calls.
use std::path::{Path, PathBuf};

use anatomy_class::chosen;
use anatomy_grade::points;
use anatomy_platforms::{self as platforms, classroom, gradescope, prairielearn, Platform};
use anyhow::Result;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Write Gradescope's autograder zip: setup.sh (builds everything once, at image time),
    /// run_autograder (one line: `autograder run`) and the course without solutions.
    Gradescope {
        out: PathBuf,
        /// Only these exercises (comma-separated names), e.g. `--only cross_attention` for the homework.
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Points (and a [late] policy) from this file instead of exercises/course.toml.
        #[arg(long, value_name = "FILE")]
        course: Option<PathBuf>,
    },
    /// GitHub Classroom's grading step: grade your exercises/ in the sandbox and give the reporter its
    /// base64 JSON (points per exercise) as the step's output `result`.
    Classroom {
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        #[arg(long, value_name = "FILE")]
        course: Option<PathBuf>,
        /// Append `result=…` to this file ($GITHUB_OUTPUT in a workflow); without it, print the base64.
        #[arg(long, value_name = "FILE")]
        github_output: Option<PathBuf>,
    },
    /// Write PrairieLearn's external grader: a Docker image folder (Dockerfile, setup.sh, the course
    /// without solutions) and a question folder (info.json, question.html) whose entry point is `run
    /// --platform prairielearn`.
    Prairielearn {
        out: PathBuf,
        /// The Docker Hub name you will push the image as (info.json names it), e.g. `me/anatomy-grader`.
        #[arg(long)]
        image: String,
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        #[arg(long, value_name = "FILE")]
        course: Option<PathBuf>,
    },
    /// Grade the one submission under ROOT and write ROOT/results/results.json: Gradescope's layout
    /// (ROOT/submission, ROOT is /autograder) or PrairieLearn's (ROOT/student, ROOT is /grade).
    Run {
        /// Default: /autograder (Gradescope), /grade (PrairieLearn).
        #[arg(long)]
        root: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "gradescope")]
        platform: Platform,
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        #[arg(long, value_name = "FILE")]
        course: Option<PathBuf>,
    },
}

/// Returns whether everything asked for succeeded (the caller turns that into the exit code).
pub fn run(command: Command) -> Result<bool> {
    match command {
        Command::Gradescope { out, only, course } => {
            chosen(&only)?;
            eprintln!("{}", gradescope::write_zip(&out, &only, &course.unwrap_or_else(points::default_file))?);
            Ok(true)
        }
        Command::Classroom { only, course, github_output } => {
            let chosen = chosen(&only)?;
            let course = anatomy_gradebook::export::load_course(&course.unwrap_or_else(points::default_file))?;
            let folder = anatomy_course::exercises_dir();
            let repository = folder.parent().map(Path::to_path_buf).unwrap_or(folder);
            let report = classroom::report(&repository, &chosen, &course, github_output.as_deref())?;
            if github_output.is_none() {
                println!("{}", report.encoded);
            }
            eprintln!("{}", report.summary);
            Ok(report.all_passed)
        }
        Command::Run { root, platform, only, course } => {
            let chosen = chosen(&only)?;
            let root = root.unwrap_or_else(|| platform.root().into());
            let course = anatomy_gradebook::export::load_course(&course.unwrap_or_else(points::default_file));
            let (path, score) = platforms::run(&root, platform, &chosen, course)?;
            eprintln!("wrote {} (score {score})", path.display());
            Ok(true)
        }
        Command::Prairielearn { out, image, only, course } => {
            let chosen = chosen(&only)?;
            let said = prairielearn::write_folders(
                &out,
                &image,
                &only,
                &chosen,
                &course.unwrap_or_else(points::default_file),
            )?;
            eprintln!("{said}");
            Ok(true)
        }
    }
}
