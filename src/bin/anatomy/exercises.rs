//! `anatomy exercises`: list the exercises and grade them.
use anyhow::{bail, Result};
use serde::Serialize;
use transformer_anatomy::exercises::{self, Outcome, Status};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// The exercises, in the order to do them.
    List,
    /// Grade the exercises in exercises/ (all, or one by name). Exit code 0 when every one checked passed.
    Check {
        /// Only this exercise.
        name: Option<String>,
        /// Print {"solutions": bool, "passed": n, "total": n, "exercises": [{"name", "status", "message"}]}.
        #[arg(long)]
        json: bool,
        /// Grade the reference solutions in solutions/ instead (instructors' copies only).
        #[arg(long)]
        solutions: bool,
    },
}

#[derive(Serialize)]
struct Report {
    solutions: bool,
    passed: usize,
    total: usize,
    exercises: Vec<Outcome>,
}

/// Returns whether every checked exercise passed (the caller turns that into the exit code).
pub fn run(args: Args) -> Result<bool> {
    let all = exercises::all();
    match args.command {
        Command::List => {
            for (i, e) in all.iter().enumerate() {
                println!("{}. {:<22} {}  ({})", i + 1, e.name, e.summary, e.file());
            }
            Ok(true)
        }
        Command::Check { name, json, solutions } => {
            if solutions && !exercises::SOLUTIONS_AVAILABLE {
                bail!("this copy of the crate has no solutions/ folder: --solutions works in the instructor's copy");
            }
            let chosen: Vec<_> = match &name {
                Some(n) => all.iter().filter(|e| e.name == n).collect(),
                None => all.iter().collect(),
            };
            if chosen.is_empty() {
                let names: Vec<&str> = all.iter().map(|e| e.name).collect();
                bail!("no exercise named {:?}: choose one of {}", name.unwrap_or_default(), names.join(", "));
            }
            let outcomes: Vec<Outcome> = chosen.iter().map(|e| e.check(solutions)).collect();
            let passed = outcomes.iter().filter(|o| o.status == Status::Passed).count();
            let report = Report { solutions, passed, total: outcomes.len(), exercises: outcomes };
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print_report(&report, &chosen);
            }
            Ok(report.passed == report.total)
        }
    }
}

fn print_report(report: &Report, chosen: &[&exercises::Exercise]) {
    let what = if report.solutions { "reference solutions" } else { "exercises" };
    for o in &report.exercises {
        let mark = match o.status {
            Status::Passed => "✓",
            Status::NotDone => "·",
            Status::Failed => "✗",
        };
        println!("{mark} {:<22} {}", o.name, o.message);
    }
    println!("{} of {} {what} passed", report.passed, report.total);
    if let Some((o, e)) = report.exercises.iter().zip(chosen).find(|(o, _)| o.status != Status::Passed) {
        if !report.solutions {
            println!(
                "next: {} — edit {}, then run `anatomy exercises check {}`; stuck? read {}",
                o.name,
                e.file(),
                o.name,
                e.hint()
            );
        }
    }
}
