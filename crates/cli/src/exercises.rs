//! `anatomy exercises`: list, grade, watch, reset and show solutions; grade a class.
use std::path::{Path, PathBuf};
use std::time::Duration;

use anatomy_class::command::{self, GradeOptions};
use anatomy_class::similar::{self, SimilarityOptions};
use anatomy_course::scaffold;
use anatomy_grade::points;
use anatomy_grade::progress;
use anatomy_grade::progress::{list_text, relative};
use anatomy_grade::sandbox::{Limits, SandboxChoice};
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// The exercises in the order to do them, with your progress (from the last grading of each).
    List,
    /// Grade your files in exercises/ (all, or one by name). Exit code 0 when every one checked passed.
    Check {
        /// Only this exercise.
        name: Option<String>,
        /// Print {"solutions": bool, "passed": n, "total": n, "exercises": [{"name", "label", "status", "message"}]}.
        #[arg(long)]
        json: bool,
        /// Grade the reference solutions in solutions/ instead (instructors' copies only).
        #[arg(long)]
        solutions: bool,
    },
    /// Work through the exercises: re-grades the current one whenever you save it, moves on when it
    /// passes. Keys: h next hint, l list, r reset this exercise, a number then Enter goes to that
    /// exercise, q quit (also while a grade runs: it is stopped).
    Watch {
        /// Start at this exercise (name or number, the homework too); else the first not passed.
        name: Option<String>,
        /// Notice saves by polling the files only (twice a second), for folders where file events do
        /// not arrive (some network and container mounts); polling also runs beside the events anyway.
        #[arg(long)]
        poll: bool,
    },
    /// Put the untouched stub of an exercise back (your version is overwritten).
    Reset { name: String },
    /// Show the reference solution of an exercise you have passed (needs solutions/).
    Solution { name: String },
    /// Grade a class: SUBMISSIONS holds one folder per student with that student's exercise files, or
    /// submitted notebooks (at the top or one folder down, as nbgrader's `submitted/STUDENT/ASSIGNMENT/`;
    /// an nbgrader course folder stands for its `submitted/`): only their solution cells are graded, never
    /// run as a notebook. Each student's code is compiled and run in a sandbox of its own: bubblewrap where
    /// it can make namespaces, else Landlock (named in every output; see exercises/README.md).
    Grade(GradeArgs),
    /// The term's gradebook (beside a course file of yours, else $ANATOMY_GRADEBOOK, else in your data folder):
    /// the roster, extensions, late penalties, overrides, history, exports.
    Gradebook(crate::gradebook::Args),
    /// Make the class report again from saved grades (the JSON lines of `grade --json`), without grading:
    /// OUT/index.html, OUT/summary.json and each student's feedback.
    Report {
        grades: PathBuf,
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The course file (default: exercises/course.toml), as when the class was graded.
        #[arg(long, value_name = "FILE")]
        course: Option<PathBuf>,
        /// Add the similarity pairs of this class folder (the one that was graded).
        #[arg(long, value_name = "SUBMISSIONS")]
        similarity: Option<PathBuf>,
    },
    /// Which students handed in matching files: per exercise, the pairs whose files share more than the
    /// stub, the reference solution and what most of the class wrote, robust to renamed names, reordered
    /// items, comments and whitespace (winnowed fingerprints, as MOSS; see exercises/README.md).
    Similarity {
        submissions: PathBuf,
        /// Only these exercises (comma-separated names).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Also write an HTML page with each pair's two files side by side, the matching lines marked.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// One JSON object per pair: {"exercise", "students": [a, b], "score" (0–1), "shared", "regions"}.
        #[arg(long)]
        json: bool,
        /// Report pairs whose score (shared over all fingerprints of either, 0–1) is at least this.
        #[arg(long, default_value_t = anatomy_intake::similarity::THRESHOLD)]
        threshold: f64,
    },
    /// A course platform's autograder: Gradescope's zip, PrairieLearn's image and question, GitHub
    /// Classroom's step, and the command a grading container runs.
    Autograder {
        #[command(subcommand)]
        command: crate::autograder::Command,
    },
    /// Print the table of exercises that exercises/README.md shows (from the one list in the crate).
    Table {
        /// Write it over the table in exercises/README.md instead (after adding an exercise).
        #[arg(long)]
        write: bool,
    },
    /// Start a new exercise (instructors): its declaration, stub, solution, hints, check and one wrong
    /// answer per named mistake, each to be written where it says so (exercises/README.md).
    New(crate::new_exercise::Args),
    /// Write the students' copy into DIR, a new folder, and check it (`make handout DIR=…`).
    Handout {
        dir: String,
        /// As a GitHub Classroom template, graded on every push.
        #[arg(long)]
        classroom: bool,
    },
}

// `grade`'s arguments (its help is the variant's, above).
#[derive(clap::Args)]
struct GradeArgs {
    submissions: PathBuf,
    /// Only these exercises (comma-separated names), e.g. `--only cross_attention` for the homework.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Write the grades as CSV for a gradebook: one row per student, one column of points per exercise, a total.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write one Markdown file per student into DIR: each exercise's status, points, message and first hint.
    #[arg(long, value_name = "DIR")]
    feedback: Option<PathBuf>,
    /// One JSON object per student instead of a Markdown table.
    #[arg(long)]
    json: bool,
    /// The course file: points that differ from the exercises' own, a late policy (default: exercises/course.toml).
    #[arg(long, value_name = "FILE")]
    course: Option<PathBuf>,
    /// Wall-time limit of one check, in seconds.
    #[arg(long, default_value_t = Limits::default().time_per_check.as_secs(), value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..))]
    time_limit: u64,
    /// Wall-time limit of one compiler run, in seconds (a file that stops the compiler is found and fails
    /// alone, after at most one more run of this long).
    #[arg(long, default_value_t = Limits::default().compile_time.as_secs(), value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..))]
    compile_time_limit: u64,
    /// Which sandbox: the strongest this machine offers (auto: bubblewrap, else Landlock), or one by
    /// name, refusing to grade without it.
    #[arg(long, value_enum, default_value_t = SandboxChoice::Auto)]
    sandbox: SandboxChoice,
    /// Run the students' code without the sandbox: only for code you trust (the table says so).
    #[arg(long)]
    no_sandbox: bool,
    /// Also write the class report into DIR: index.html (which steps the class got wrong, and how),
    /// summary.json (the same numbers) and each student's feedback.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// With --report: add the similarity report's pairs (see `similarity`).
    #[arg(long, requires = "report")]
    similarity: bool,
    /// The due date (e.g. 2026-12-01T23:59:00Z): a student whose folder says they handed in later
    /// (nbgrader's timestamp.txt) keeps the share of the points the course's [late] policy gives.
    #[arg(long, value_name = "DATE", value_parser = anatomy_intake::times::parse_due)]
    due: Option<points::OffsetDateTime>,
    /// The assignment the course file declares (its exercises and due date): the hand-ins are matched to
    /// the gradebook's roster and the run is recorded in it (see `gradebook --help` for where it is).
    #[arg(long)]
    assignment: Option<String>,
    /// Regrade only these students of the gradebook (login, platform id or label; comma-separated).
    #[arg(long, value_delimiter = ',')]
    student: Vec<String>,
}

/// Returns whether everything asked for succeeded (the caller turns that into the exit code).
pub fn run(args: Args) -> Result<bool> {
    match args.command {
        Command::List => {
            progress::write_missing_stubs()?;
            print!("{}", list_text());
            Ok(true)
        }
        Command::Check { name, json, solutions } => {
            let own = anatomy_class::check::check(name, solutions)?;
            match json {
                true => println!("{}", serde_json::to_string_pretty(&own.checked)?),
                false => print!("{}", own.checked.text(&own.repeats)),
            }
            Ok(own.all_passed())
        }
        Command::Watch { name, poll } => {
            let start = name.as_deref().map(progress::chosen).transpose()?;
            progress::write_missing_stubs()?;
            crate::watch::run(poll, start)
        }
        Command::Reset { name } => {
            let e = anatomy_course::find(&name)?;
            progress::reset(e)?;
            println!("{} is the untouched stub again", relative(&e.file()));
            Ok(true)
        }
        Command::Solution { name } => {
            println!("{}", progress::solution(anatomy_course::find(&name)?)?);
            Ok(true)
        }
        Command::Grade(args) => grade_class(args),
        Command::Gradebook(args) => crate::gradebook::run(args),
        Command::Report { grades, out, course, similarity } => {
            eprintln!("{}", command::remake_report(&grades, &out, course.as_deref(), similarity.as_deref())?);
            Ok(true)
        }
        Command::Similarity { submissions, only, html, json, threshold } => {
            let compared = similar::compare(&SimilarityOptions { submissions, only, html, json, threshold })?;
            print!("{}", compared.pairs);
            for why in &compared.skipped {
                eprintln!("not compared: {why}");
            }
            eprintln!("{}", compared.closing_line);
            Ok(true)
        }
        Command::Autograder { command } => crate::autograder::run(command),
        Command::Table { write: false } => {
            print!("{}", anatomy_course::markdown_table());
            Ok(true)
        }
        Command::Table { write: true } => {
            println!("{}: the table of exercises written", relative(&scaffold::write_table()?));
            Ok(true)
        }
        Command::New(args) => crate::new_exercise::run(args),
        Command::Handout { dir, classroom } => {
            let mut say = |line: &str| println!("\x1b[1m[handout]\x1b[0m {line}");
            let written = anatomy_platforms::handout::write(Path::new(&dir), classroom, &mut say);
            match &written {
                Ok(last) => say(last),
                Err(e) => eprintln!("\x1b[1;31m[handout] error:\x1b[0m {e:#}"),
            }
            Ok(written.is_ok())
        }
    }
}

/// `grade`: the class the arguments choose, graded with their limits and sandbox (and recorded, when they
/// name an assignment or students) by the class stage, with a progress bar; prints what it says.
fn grade_class(args: GradeArgs) -> Result<bool> {
    let options = GradeOptions {
        submissions: args.submissions,
        only: args.only,
        csv: args.csv,
        feedback: args.feedback,
        json: args.json,
        course: args.course,
        time_per_check: Duration::from_secs(args.time_limit),
        compile_time: Duration::from_secs(args.compile_time_limit),
        sandbox: args.sandbox,
        no_sandbox: args.no_sandbox,
        report: args.report,
        similarity: args.similarity,
        due: args.due,
        assignment: args.assignment,
        students: args.student,
    };
    let bar = indicatif::ProgressBar::new(0).with_style(
        indicatif::ProgressStyle::with_template("grading {bar:30} {pos}/{len} students, {elapsed} (ETA {eta})")
            .expect("a valid template"),
    );
    let progress = |n: usize, of: usize| {
        bar.set_length(of as u64);
        bar.set_position(n as u64)
    };
    let graded = command::grade(options, &mut |line| eprintln!("{line}"), &progress);
    bar.finish_and_clear();
    let printout = graded?;
    if let Some(line) = &printout.report_line {
        eprintln!("{line}");
    }
    print!("{}", printout.rows);
    eprintln!("{}", printout.closing_line);
    if let Some(line) = &printout.recorded {
        eprintln!("{line}");
    }
    printout.finish()?;
    Ok(true)
}
