//! `anatomy exercises gradebook`: the term's gradebook (anatomy_gradebook).
use std::path::PathBuf;

use anatomy_grade::points::{self, CourseFile, OffsetDateTime};
use anatomy_gradebook::command::{ExportOptions, ExtendOptions, LateOptions, OverrideOptions};
use anatomy_gradebook::export::{Format, MoodleId};
use anatomy_gradebook::location::Location;
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// The course file (default: exercises/course.toml). The gradebook is `gradebook.sqlite` beside a course
    /// file of yours, else $ANATOMY_GRADEBOOK, else in your data folder
    /// ($XDG_DATA_HOME/transformer-anatomy/, by default ~/.local/share/transformer-anatomy/).
    #[arg(long, value_name = "FILE", global = true)]
    course: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Import the class list: Canvas's gradebook export, or a CSV of name, id, login, section, sis_id,
    /// email. Creates the gradebook; importing again updates the students, by their platform id.
    Roster { file: PathBuf },
    /// Before grading: which hand-ins belong to which student, and who is left over on either side (with
    /// --assignment, Canvas's LATE marks of students with an extension are listed apart, to check).
    Match {
        submissions: PathBuf,
        #[arg(long)]
        assignment: Option<String>,
    },
    /// The current grades: each assignment's total, or with --assignment each of its exercises.
    Show {
        #[arg(long)]
        assignment: Option<String>,
    },
    /// Give a student their own due date for an assignment, with the reason; it counts at once.
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
    /// A late penalty on a whole assignment, by the course's [late] policy: STUDENT=DAYS (days late) or
    /// STUDENT=TIME (the hand-in time, counted from their own due date); with --clear, STUDENT withdraws it.
    Late {
        #[arg(required = true, value_name = "STUDENT=DAYS|TIME")]
        students: Vec<String>,
        #[arg(long)]
        assignment: Option<String>,
        #[arg(long)]
        clear: bool,
        #[arg(long)]
        reason: String,
        #[arg(long)]
        by: Option<String>,
    },
    /// How a student's grades came to be: every run, override, extension and late penalty, oldest first.
    History { student: String },
    /// The grades as a learning platform imports them: every assignment, or one (--assignment).
    Export {
        #[arg(long)]
        format: Format,
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        #[arg(long)]
        assignment: Option<String>,
        /// For Moodle: the one column each row is matched by.
        #[arg(long)]
        identify: Option<MoodleId>,
        /// For Moodle: your site takes grades above 100 (Site administration > Grades > General settings >
        /// Unlimited grades), so an assignment worth more may be exported.
        #[arg(long)]
        unlimited_grades: bool,
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

pub fn run(args: Args) -> Result<bool> {
    let at = Location::of(args.course.as_deref());
    let course = anatomy_gradebook::export::load_course(&args.course.unwrap_or_else(points::default_file))?;
    run_on(&at, &course, args.command).map_err(|e| at.named(e))
}

fn run_on(at: &Location, course: &CourseFile, command: Command) -> Result<bool> {
    let named = |a: Option<String>| a.map(|a| course.assignment(Some(&a))).transpose();
    match command {
        Command::Roster { file } => println!("{}", at.import(&anatomy_gradebook::roster::read_roster(&file)?)?),
        Command::Match { submissions, assignment } => {
            let matched = at.read()?.match_hand_ins(&submissions, named(assignment)?.as_ref())?;
            println!("{}", matched.lines().join("\n"));
            return Ok(matched.unmatched.is_empty());
        }
        Command::Show { assignment } => print!("{}", at.read()?.show(course, named(assignment)?.as_ref())?),
        Command::Extend { student, assignment, due, days, reason, by } => {
            println!("{}", at.extend(course, ExtendOptions { student, assignment, due, days, reason, by })?)
        }
        Command::Override { student, exercise, points, clear, comment, by } => {
            println!("{}", at.set_override(course, OverrideOptions { student, exercise, points, clear, comment, by })?)
        }
        Command::Late { students, assignment, clear, reason, by } => {
            println!("{}", at.set_late(course, LateOptions { students, assignment, clear, reason, by })?.join("\n"))
        }
        Command::History { student } => print!("{}", at.history(&student)?),
        Command::Export { format, out, assignment, identify, unlimited_grades } => {
            let written =
                at.export_to(course, ExportOptions { format, out, assignment, identify, unlimited_grades })?;
            for warning in &written.warnings {
                eprintln!("warning: {warning}");
            }
            println!("{}", written.line);
        }
        Command::Report { assignment, out, similarity } => {
            let assignment = course.assignment(assignment.as_deref())?;
            let summary = at.read()?.pages(course, &assignment, &out, similarity)?;
            eprintln!("{}", summary.closing_line(&out));
        }
    }
    Ok(true)
}
