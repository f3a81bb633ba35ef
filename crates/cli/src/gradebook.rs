//! `anatomy exercises gradebook`: the term's gradebook beside the course file (anatomy_gradebook).
use std::path::PathBuf;

use anatomy_grade::points::{self, CourseFile, OffsetDateTime};
use anatomy_gradebook::adjust::who;
use anatomy_gradebook::export::Format;
use anatomy_gradebook::matching::match_hand_ins;
use anatomy_gradebook::roster::unambiguous;
use anatomy_gradebook::Gradebook;
use anatomy_report::sheet::write_whole;
use anyhow::{Context, Result};

#[derive(clap::Args)]
pub struct Args {
    /// The course file; the gradebook is `gradebook.sqlite` beside it (default: exercises/course.toml).
    #[arg(long, value_name = "FILE", global = true)]
    course: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Import the class list: Canvas's gradebook export, or a CSV of name, id, login, section. Creates
    /// the gradebook; importing again updates the students, by their platform id.
    Roster { file: PathBuf },
    /// Before grading: which hand-ins belong to which student, and who is left over on either side.
    Match { submissions: PathBuf },
    /// The current grades: each assignment's total, or with --assignment each of its exercises.
    Show {
        #[arg(long)]
        assignment: Option<String>,
    },
    /// Give a student their own due date for an assignment, with the reason; it counts from their next grading.
    Extend {
        student: String,
        #[arg(long)]
        assignment: Option<String>,
        /// The new due date (e.g. 2026-12-04T23:59:00Z).
        #[arg(long, value_parser = anatomy_intake::times::parse_due, required_unless_present = "days")]
        due: Option<OffsetDateTime>,
        /// Or: this many days after the assignment's due date.
        #[arg(long, conflicts_with = "due")]
        days: Option<u32>,
        #[arg(long)]
        reason: String,
        /// Who grants it (default: your login).
        #[arg(long)]
        by: Option<String>,
    },
    /// Set one cell's points by hand, with a comment; it stands over later runs until --clear.
    Override {
        student: String,
        exercise: String,
        #[arg(long, required_unless_present = "clear")]
        points: Option<f64>,
        /// Withdraw the override: the runs decide again.
        #[arg(long, conflicts_with = "points")]
        clear: bool,
        #[arg(long)]
        comment: String,
        #[arg(long)]
        by: Option<String>,
    },
    /// How a student's grades came to be: every run, override and extension, oldest first.
    History { student: String },
    /// Every assignment's grades as a learning platform imports them.
    Export {
        #[arg(long, value_parser = format_parser())]
        format: Format,
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// The class report of an assignment made again from the gradebook alone (with --similarity, its
    /// pairs and OUT/similarity.html from the files the gradebook kept).
    Report {
        #[arg(long)]
        assignment: Option<String>,
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        #[arg(long)]
        similarity: bool,
    },
}

/// `--format`'s values, from the library's list (`Format::ALL`).
fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = Format::ALL.map(|f| PossibleValue::new(f.name()).help(f.summary()));
    PossibleValuesParser::new(values)
        .map(|n| *Format::ALL.iter().find(|f| f.name() == n).expect("clap accepted only these"))
}

pub fn run(args: Args) -> Result<bool> {
    let course_file = args.course.unwrap_or_else(points::default_file);
    let course = CourseFile::load(&course_file)?;
    let path = Gradebook::beside(&course_file);
    if let Command::Roster { file } = &args.command {
        let roster = anatomy_gradebook::roster::read_roster(file)?;
        let mut book = Gradebook::open_or_create(&path)?;
        println!("{}", book.import_roster(&roster)?.line(&book));
        return Ok(true);
    }
    let mut book = Gradebook::open(&path)?;
    match args.command {
        Command::Roster { .. } => unreachable!("handled above"),
        Command::Match { submissions } => {
            book.require_roster()?;
            let matched = match_hand_ins(&submissions, &book.students()?)?;
            println!("{}", matched.lines().join("\n"));
            return Ok(matched.unmatched.is_empty());
        }
        Command::Show { assignment } => {
            let assignment = assignment.map(|a| course.assignment(Some(&a))).transpose()?;
            print!("{}", book.show(&course, assignment.as_ref())?);
        }
        Command::Extend { student, assignment, due, days, reason, by } => {
            let (student, assignment) = (book.student(&student)?, course.assignment(assignment.as_deref())?);
            let due = book.extend(&student, &assignment, due, days, &reason, &who(by))?;
            println!(
                "{} is due {} for {} (from their next grading: anatomy exercises grade … --assignment {} --student {})",
                student.label,
                points::format_time(due),
                assignment.name,
                assignment.name,
                unambiguous(&book.students()?, &student)
            );
        }
        Command::Override { student, exercise, points, clear, comment, by } => {
            let student = book.student(&student)?;
            let e = anatomy_course::find(&exercise)?;
            let points = if clear { None } else { points };
            book.set_override(&student, e.name, points, course.max(e.name), &comment, &who(by))?;
            match points {
                Some(p) => println!(
                    "{} of {}: {} points, set by hand",
                    e.name,
                    student.label,
                    anatomy_report::sheet::points(p)
                ),
                None => println!("{} of {}: the override is withdrawn, the latest run counts", e.name, student.label),
            }
        }
        Command::History { student } => {
            let student = book.student(&student)?;
            println!("{} ({}; id {}, section {}):", student.label, student.name, student.lms_id, student.section);
            for event in book.history(&student)? {
                println!("{}", event.line());
            }
        }
        Command::Export { format, out } => {
            let exported = book.export(&course, format)?;
            write_whole(&out, &exported.text).with_context(|| format!("cannot write {}", out.display()))?;
            for warning in &exported.warnings {
                eprintln!("warning: {warning}");
            }
            println!("wrote {} ({})", out.display(), format.summary());
        }
        Command::Report { assignment, out, similarity } => {
            let assignment = course.assignment(assignment.as_deref())?;
            let summary = book.pages(&course, &assignment, &out, similarity)?;
            eprintln!("{}", summary.closing_line(&out));
        }
    }
    Ok(true)
}
