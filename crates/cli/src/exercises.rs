//! `anatomy exercises`: list, grade, watch, reset and show solutions; grade a class.
use std::path::{Path, PathBuf};
use std::time::Instant;

use anatomy_exercises::course::{self, Course};
use anatomy_exercises::gradebook::{write_whole, Gradebook, Row};
use anatomy_exercises::grading::{self, Submission};
use anatomy_exercises::platforms::{self, classroom, gradescope, prairielearn, Platform};
use anatomy_exercises::progress::{list_text, mark, relative};
use anatomy_exercises::sandbox::{self, Limits, Tier, Wanted};
use anatomy_exercises::similarity;
use anatomy_exercises::{self as exercises, progress, Exercise, Outcome, Status, EXERCISES};
use anyhow::{bail, Context, Result};
use serde::Serialize;

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
    /// passes. Keys: h next hint, l list, r reset this exercise, q quit.
    Watch {
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
    Grade {
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
        /// Points per exercise (default: exercises/course.toml).
        #[arg(long, value_name = "FILE")]
        course: Option<PathBuf>,
        /// Wall-time limit of one check, in seconds.
        #[arg(long, default_value_t = 20, value_name = "SECONDS")]
        time_limit: u64,
        /// Which sandbox: the strongest this machine offers (auto: bubblewrap, else Landlock), or one by
        /// name, refusing to grade without it.
        #[arg(long, value_parser = sandbox_parser(), default_value = "auto")]
        sandbox: Wanted,
        /// Run the students' code without the sandbox: only for code you trust (the table says so).
        #[arg(long)]
        no_sandbox: bool,
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
        #[arg(long, default_value_t = anatomy_exercises::similarity::THRESHOLD)]
        threshold: f64,
    },
    /// A course platform's autograder: Gradescope's zip, PrairieLearn's image and question, GitHub
    /// Classroom's step, and the command a grading container runs.
    Autograder {
        #[command(subcommand)]
        command: AutograderCommand,
    },
    /// Print the table of exercises that exercises/README.md shows (from the one list in the crate).
    Table,
}

#[derive(clap::Subcommand)]
enum AutograderCommand {
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
        #[arg(long, value_parser = platform_parser(), default_value = "gradescope")]
        platform: Platform,
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        #[arg(long, value_name = "FILE")]
        course: Option<PathBuf>,
    },
}

/// `--platform`'s values, read off the library's one list of them (`Platform::ALL`, `Platform::name`).
fn platform_parser() -> impl clap::builder::TypedValueParser<Value = Platform> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(Platform::ALL.map(Platform::name))
        .map(|name| *Platform::ALL.iter().find(|p| p.name() == name).expect("clap accepted only these names"))
}

/// `--sandbox`'s values, read off the library's one list of them (`Wanted::ALL`, `Wanted::name`).
fn sandbox_parser() -> impl clap::builder::TypedValueParser<Value = Wanted> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = Wanted::ALL.map(|w| PossibleValue::new(w.name()).help(w.summary()));
    PossibleValuesParser::new(values)
        .map(|name| *Wanted::ALL.iter().find(|w| w.name() == name).expect("clap accepted only these names"))
}

#[derive(Serialize)]
struct Report {
    solutions: bool,
    passed: usize,
    total: usize,
    exercises: Vec<Outcome>,
}

/// Returns whether everything asked for succeeded (the caller turns that into the exit code).
pub fn run(args: Args) -> Result<bool> {
    match args.command {
        Command::List => {
            progress::write_missing_stubs()?;
            print!("{}", list_text());
            Ok(true)
        }
        Command::Check { name, json, solutions } => check(name, json, solutions),
        Command::Watch { poll } => {
            progress::write_missing_stubs()?;
            crate::watch::run(poll)
        }
        Command::Reset { name } => {
            let e = exercises::find(&name)?;
            progress::reset(e)?;
            println!("{} is the untouched stub again", relative(&e.file()));
            Ok(true)
        }
        Command::Solution { name } => {
            println!("{}", solution(exercises::find(&name)?)?);
            Ok(true)
        }
        Command::Grade { submissions, only, csv, feedback, json, course, time_limit, sandbox, no_sandbox } => {
            let chosen = chosen(&only)?;
            let course = Course::load(&course.unwrap_or_else(course::default_file))?;
            let tier = if no_sandbox { Tier::None } else { sandbox::choose(sandbox)? };
            let class = Class { chosen, course, tier, time_limit };
            class.grade(&submissions, json, csv.as_deref(), feedback.as_deref())
        }
        Command::Similarity { submissions, only, html, json, threshold } => {
            let (chosen, students) = (chosen(&only)?, students(&submissions)?);
            let report = similarity::report::compare(&students, &chosen, threshold)?;
            if let Some(path) = &html {
                write_whole(path, &report.html(&submissions))?;
            }
            print!("{}", if json { report.json_lines()? } else { report.markdown() });
            for why in &report.skipped {
                eprintln!("not compared: {why}");
            }
            let weak = report.pairs.iter().filter(|p| p.evidence == similarity::Evidence::Weak).count();
            eprintln!(
                "compared {} students × {} exercises: {} pairs at or above {threshold:.2}{}",
                students.len(),
                chosen.len(),
                report.pairs.len(),
                match weak {
                    0 => String::new(),
                    n => format!(
                        ", {n} of them weak evidence (they share no more than one whole answer holds: the exercise is \
                         too short to tell)"
                    ),
                }
            );
            Ok(true)
        }
        Command::Autograder { command: AutograderCommand::Gradescope { out, only, course } } => {
            chosen(&only)?;
            eprintln!("{}", gradescope::write_zip(&out, &only, &course.unwrap_or_else(course::default_file))?);
            Ok(true)
        }
        Command::Autograder { command: AutograderCommand::Classroom { only, course, github_output } } => {
            let chosen = chosen(&only)?;
            let course = Course::load(&course.unwrap_or_else(course::default_file))?;
            let folder = exercises::exercises_dir();
            let repository = folder.parent().map(Path::to_path_buf).unwrap_or(folder);
            let report = classroom::report(&repository, &chosen, &course, github_output.as_deref())?;
            if github_output.is_none() {
                println!("{}", report.encoded);
            }
            eprintln!("{}", report.summary);
            Ok(report.all_passed)
        }
        Command::Autograder { command: AutograderCommand::Run { root, platform, only, course } } => {
            let chosen = chosen(&only)?;
            let root = root.unwrap_or_else(|| platform.root().into());
            let course = Course::load(&course.unwrap_or_else(course::default_file));
            let (path, score) = platforms::run(&root, platform, &chosen, course)?;
            eprintln!("wrote {} (score {score})", path.display());
            Ok(true)
        }
        Command::Autograder { command: AutograderCommand::Prairielearn { out, image, only, course } } => {
            let chosen = chosen(&only)?;
            let said = prairielearn::write_folders(
                &out,
                &image,
                &only,
                &chosen,
                &course.unwrap_or_else(course::default_file),
            )?;
            eprintln!("{said}");
            Ok(true)
        }
        Command::Table => {
            print!("{}", table());
            Ok(true)
        }
    }
}

/// The exercises `--only` names, or all of them.
fn chosen(only: &[String]) -> Result<Vec<&'static Exercise>> {
    match only.is_empty() {
        true => Ok(EXERCISES.iter().collect()),
        false => only.iter().map(|n| exercises::find(n)).collect(),
    }
}

/// A class folder's students, by name, in order: one folder each (the folders are the instructor's, so a
/// folder that is a link is followed; what is inside is the student's, and read by `handin`). An nbgrader
/// course folder (one with `nbgrader_config.py` and `submitted/`) stands for its `submitted/`.
fn students(submissions: &Path) -> Result<Vec<(String, PathBuf)>> {
    let nbgrader = submissions.join("submitted");
    let submissions = match submissions.join("nbgrader_config.py").is_file() && nbgrader.is_dir() {
        true => nbgrader.as_path(),
        false => submissions,
    };
    let mut students: Vec<PathBuf> = std::fs::read_dir(submissions)
        .with_context(|| format!("{} is not a folder of student folders", submissions.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    students.sort();
    if students.is_empty() {
        bail!("{} holds no student folders (one folder per student, with their exercise files)", submissions.display());
    }
    Ok(students.into_iter().map(|s| (s.file_name().expect("a folder").to_string_lossy().to_string(), s)).collect())
}

fn check(name: Option<String>, json: bool, solutions: bool) -> Result<bool> {
    let chosen: Vec<&'static Exercise> = match &name {
        Some(n) => vec![exercises::find(n)?],
        None => EXERCISES.iter().collect(),
    };
    let submissions: Vec<Submission> = if solutions {
        if !chosen[0].solution_file().exists() {
            bail!("this copy of the course has no solutions/ folder: --solutions works in the instructor's copy");
        }
        grading::by_name(&chosen, Exercise::solution_file)
    } else {
        progress::write_missing_stubs()?;
        progress::own_files(&chosen)
    };
    let outcomes = grading::grade(&submissions)?;
    if !solutions {
        progress::record(&outcomes)?;
    }
    let passed = outcomes.iter().filter(|o| o.status == Status::Passed).count();
    let report = Report { solutions, passed, total: outcomes.len(), exercises: outcomes };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(report.passed == report.total)
}

fn print_report(report: &Report) {
    let what = if report.solutions { "reference solutions" } else { "exercises" };
    for o in &report.exercises {
        let message = if o.status == Status::DoesNotCompile {
            format!("does not compile:\n{}", o.message)
        } else {
            o.message.clone()
        };
        println!("{} {:<22} {message}", mark(Some(o.status)), o.name);
    }
    println!("{} of {} {what} passed", report.passed, report.total);
    if let Some(o) = report.exercises.iter().find(|o| o.status != Status::Passed) {
        if !report.solutions {
            let e = exercises::find(o.name).expect("registered");
            println!(
                "next: {} — edit {}, then run `anatomy exercises check {}` (or `anatomy exercises watch`); stuck? \
                 read {}",
                o.name,
                relative(&e.file()),
                o.name,
                relative(&e.hint_file())
            );
        }
    }
}

/// The reference solution, once the exercise has passed.
pub fn solution(e: &Exercise) -> Result<String> {
    let file = e.solution_file();
    if !file.exists() {
        bail!("this copy of the course has no solutions/ folder (instructors keep it back)");
    }
    if progress::load().get(e.name) != Some(&Status::Passed) {
        bail!(
            "{} has not passed yet: solve it first (`anatomy exercises check {}`), then the solution opens",
            e.name,
            e.name
        );
    }
    std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))
}

/// The instructors' table: number, exercise, chapter, task.
pub fn table() -> String {
    let mut text = String::from("| # | exercise | chapter | the task |\n| --- | --- | --- | --- |\n");
    for e in EXERCISES {
        let task =
            if e.homework { format!("**the chapter's homework**: {}", e.summary) } else { e.summary.to_string() };
        text += &format!("| {} | `{}` | `{}` | {task} |\n", e.number(), e.name, e.chapter);
    }
    text
}

/// What a class is graded on.
struct Class {
    chosen: Vec<&'static Exercise>,
    course: Course,
    tier: Tier,
    time_limit: u64,
}

impl Class {
    fn grade(&self, submissions: &Path, json: bool, csv: Option<&Path>, feedback: Option<&Path>) -> Result<bool> {
        let started = Instant::now();
        let (who, students): (Vec<String>, Vec<PathBuf>) = students(submissions)?.into_iter().unzip();
        // Nothing is written until the grades are known; say now if the CSV's folder is missing.
        if let Some(folder) = csv.and_then(Path::parent).filter(|f| !f.as_os_str().is_empty()) {
            if !folder.is_dir() {
                bail!("--csv: the folder {} does not exist", folder.display());
            }
        }
        // A file a student did not hand in is graded as the untouched stub.
        let units = students
            .iter()
            .zip(&who)
            .map(|(student, who)| grading::student_unit(student, Some(who), &self.chosen))
            .collect::<Result<Vec<_>>>()?;
        let options = grading::Options {
            tier: self.tier.clone(),
            limits: Limits { time_per_check: std::time::Duration::from_secs(self.time_limit), ..Limits::default() },
            ..grading::Options::default()
        };
        let bar = indicatif::ProgressBar::new(units.len() as u64).with_style(
            indicatif::ProgressStyle::with_template("grading {bar:30} {pos}/{len} students, {elapsed} (ETA {eta})")
                .expect("a valid template"),
        );
        let graded = grading::grade_units(units, &options, &|n| bar.set_position(n as u64))?;
        bar.finish_and_clear();
        // When the grader itself failed (not a student's file: a full disk, say), the students graded
        // before it are written out all the same, and the failure ends the command after them.
        let rows: Vec<Row> = who
            .into_iter()
            .zip(graded.units)
            .filter_map(|(student, outcomes)| Some(Row { student, outcomes: outcomes? }))
            .collect();
        let book = Gradebook { chosen: &self.chosen, course: &self.course, tier: &self.tier };
        if let Some(path) = csv {
            write_whole(path, &book.csv(&rows)?)?;
        }
        if let Some(dir) = feedback {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            for row in &rows {
                write_whole(&dir.join(format!("{}.md", row.student)), &book.feedback(row))?;
            }
        }
        if json {
            for row in &rows {
                println!("{}", book.json(row));
            }
        } else {
            print!("{}", book.table(&rows));
        }
        let cells = rows.len() * self.chosen.len();
        let passed: usize = rows.iter().map(Row::passed).sum();
        eprintln!(
            "graded {} students × {} exercises in {:.1} s: {passed} of {cells} passed{}",
            rows.len(),
            self.chosen.len(),
            started.elapsed().as_secs_f64(),
            match self.tier {
                Tier::None => " (no sandbox)".to_string(),
                _ => format!(", each student in a sandbox ({})", self.tier.words()),
            }
        );
        if let Some(failure) = graded.failure {
            let left = students.len() - rows.len();
            return Err(failure.context(format!(
                "the grader stopped with {left} of {} students not graded (the rows above are the graded ones)",
                students.len()
            )));
        }
        Ok(true)
    }
}
