//! `anatomy exercises`: list, grade, watch, reset and show solutions; grade a class.
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use transformer_anatomy::exercises::grading::{self, Submission};
use transformer_anatomy::exercises::{self, progress, Exercise, Outcome, Status, EXERCISES};

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
    /// Grade a class: SUBMISSIONS holds one folder per student with that student's exercise files.
    Grade {
        submissions: PathBuf,
        /// One JSON object per student instead of a Markdown table.
        #[arg(long)]
        json: bool,
    },
    /// Print the table of exercises that exercises/README.md shows (from the one list in the crate).
    Table,
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
        Command::Grade { submissions, json } => grade_class(&submissions, json),
        Command::Table => {
            print!("{}", table());
            Ok(true)
        }
    }
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

/// ✓ passed, · not done, ✗ failed or does not compile.
pub fn mark(status: Option<Status>) -> &'static str {
    match status {
        Some(Status::Passed) => "✓",
        Some(Status::Failed | Status::DoesNotCompile) => "✗",
        Some(Status::NotDone) | None => "·",
    }
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

/// The list with progress, as `list` and the watch mode's `l` show it.
pub fn list_text() -> String {
    let progress = progress::load();
    let mut text = String::new();
    let mut done = 0;
    for e in EXERCISES {
        let status = progress.get(e.name).copied();
        done += usize::from(status == Some(Status::Passed));
        let state = match status {
            Some(Status::Passed) => "done",
            Some(Status::Failed | Status::DoesNotCompile) => "failing",
            _ => "not done",
        };
        let homework = if e.homework { " (the chapter's homework)" } else { "" };
        text += &format!("{} {:>2}. {:<22} {:<9} {}{homework}\n", mark(status), e.number(), e.name, state, e.summary);
    }
    text +=
        &format!("{done} of {} done; progress is kept in {}\n", EXERCISES.len(), relative(&progress::progress_file()));
    text
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

pub fn relative(path: &Path) -> String {
    path.strip_prefix(grading::project_root()).unwrap_or(path).display().to_string()
}

/// The file a student handed in for an exercise: `DIR/exercises/NAME.rs` or `DIR/NAME.rs`.
fn handed_in(student: &Path, e: &Exercise) -> Option<PathBuf> {
    [student.join("exercises").join(format!("{}.rs", e.name)), student.join(format!("{}.rs", e.name))]
        .into_iter()
        .find(|p| p.is_file())
}

fn grade_class(submissions: &Path, json: bool) -> Result<bool> {
    let started = Instant::now();
    let mut students: Vec<PathBuf> = std::fs::read_dir(submissions)
        .with_context(|| format!("{} is not a folder of student folders", submissions.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    students.sort();
    if students.is_empty() {
        bail!("{} holds no student folders (one folder per student, with their exercise files)", submissions.display());
    }
    // A file a student did not hand in is graded as the untouched stub.
    let who: Vec<String> =
        students.iter().map(|s| s.file_name().expect("a folder").to_string_lossy().to_string()).collect();
    let mut all = Vec::new();
    for (student, who) in students.iter().zip(&who) {
        for e in EXERCISES {
            let file = match handed_in(student, e) {
                Some(f) => f,
                None => grading::stub_file(e)?,
            };
            all.push(Submission { label: format!("{who}/{}", e.name), exercise: e, file });
        }
    }
    // The outcomes come back in the submissions' order: one row of EXERCISES.len() per student.
    let outcomes = grading::grade(&all)?;
    let rows: Vec<(&String, &[Outcome])> = who.iter().zip(outcomes.chunks(EXERCISES.len())).collect();
    if !json {
        let names: Vec<&str> = EXERCISES.iter().map(|e| e.name).collect();
        println!("| student | {} | passed |", names.join(" | "));
        println!("{}|", "|---".repeat(names.len() + 2));
    }
    for (who, row) in &rows {
        let passed = row.iter().filter(|o| o.status == Status::Passed).count();
        if json {
            let mut object = serde_json::Map::new();
            object.insert("student".into(), (*who).clone().into());
            for o in *row {
                object.insert(o.name.into(), o.status.words().into());
            }
            object.insert("passed".into(), passed.into());
            object.insert("total".into(), row.len().into());
            let messages: serde_json::Map<String, serde_json::Value> = row
                .iter()
                .filter(|o| o.status != Status::Passed && o.status != Status::NotDone)
                .map(|o| (o.name.to_string(), o.message.clone().into()))
                .collect();
            object.insert("messages".into(), messages.into());
            println!("{}", serde_json::Value::Object(object));
        } else {
            let cells: Vec<&str> = row.iter().map(|o| o.status.words()).collect();
            println!("| {who} | {} | {passed}/{} |", cells.join(" | "), row.len());
        }
    }
    eprintln!(
        "graded {} students × {} exercises in {:.1} s",
        rows.len(),
        EXERCISES.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(true)
}
