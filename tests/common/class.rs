//! What the command's class tests (crates/cli/tests: the hostile class, the autograders, the similarity
//! report, the class report) share: a student who hands in every reference solution, the `anatomy` binary
//! run with its exit code, stdout and stderr, and what a class report must agree with. Only files that
//! have `solutions/` include it; each uses a part.
#![allow(dead_code)]
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anatomy_course::EXERCISES;

/// Copies every reference solution into `folder` as `NAME.rs`.
pub fn hand_in_solutions(folder: &Path) {
    std::fs::create_dir_all(folder).unwrap();
    for e in EXERCISES {
        std::fs::copy(e.solution_file(), folder.join(format!("{}.rs", e.name))).unwrap();
    }
}

/// The `anatomy` binary, kept from the gradebook of whoever runs the tests: its data folder
/// (`XDG_DATA_HOME`, where a gradebook is kept without `--course`) is a folder of this test process's that
/// holds none, and `ANATOMY_GRADEBOOK` is unset, so that no command's output depends on the machine.
pub fn command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_anatomy"));
    let data = std::env::temp_dir().join(format!("anatomy-{}-data", std::process::id()));
    command.env("XDG_DATA_HOME", data).env_remove("ANATOMY_GRADEBOOK");
    command
}

/// `anatomy ARGS` ([`command`]): exit code, stdout, stderr.
pub fn anatomy(args: &[&str]) -> (Option<i32>, String, String) {
    run(command().args(args))
}

/// Runs `command` to its end: exit code, stdout, stderr.
pub fn run(command: &mut Command) -> (Option<i32>, String, String) {
    let o = command.output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// `anatomy exercises grade CLASS --json --csv CSV --report REPORT MORE…`: exit code, the JSON lines, stderr.
pub fn grade_with_report(class: &Path, csv: &Path, report: &Path, more: &[&str]) -> (Option<i32>, String, String) {
    let (class, csv, report) = (class.to_str().unwrap(), csv.to_str().unwrap(), report.to_str().unwrap());
    let mut args = vec!["exercises", "grade", class, "--json", "--csv", csv, "--report", report];
    args.extend_from_slice(more);
    anatomy(&args)
}

/// A grading's JSON lines (the standard output of `anatomy exercises grade --json`), one value a student.
pub fn json_lines(out: &str) -> Vec<serde_json::Value> {
    out.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The class report in `report` (`--report`) agrees with the JSON lines and the CSV (`--csv`) of the same
/// grading: `summary.json` lists `exercises`, in order, each with as many students per status as the JSON
/// lines give it, and counts each mistake (named, or a stop) for as many students as the JSON lines and
/// the CSV's notes do. Returns those counts, by exercise and mistake.
pub fn report_agrees(report: &Path, lines: &[serde_json::Value], csv: &Path, exercises: &[&str]) -> Counted {
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap();
    let statuses = summary["statuses"].as_array().unwrap();
    let listed: Vec<&str> = statuses.iter().map(|s| s["exercise"].as_str().unwrap()).collect();
    assert_eq!(listed, exercises, "the summary's exercises");
    for row in statuses {
        let exercise = row["exercise"].as_str().unwrap();
        for status in anatomy_course::Status::ALL {
            let key = serde_json::to_value(status).unwrap();
            let n = lines.iter().filter(|l| l[exercise] == status.words()).count();
            assert_eq!(row[key.as_str().unwrap()].as_u64().unwrap() as usize, n, "{exercise} {key}");
        }
    }
    let mut counted = counted_in(&summary["mistakes"]);
    counted.extend(counted_in(&summary["stops"]));
    let mut from_lines = Counted::new();
    for l in lines {
        for (exercise, id) in l["mistakes"].as_object().unwrap() {
            *from_lines.entry((exercise.clone(), id.as_str().unwrap().into())).or_default() += 1;
        }
    }
    assert_eq!(counted, from_lines, "the summary's mistakes and the JSON lines'");
    let mut reader = csv::Reader::from_path(csv).unwrap();
    let notes = reader.headers().unwrap().iter().position(|h| h == "notes").expect("a notes column");
    let mut from_csv = Counted::new();
    for record in reader.records() {
        for note in record.unwrap()[notes].split("; ").filter(|n| !n.is_empty()) {
            let (exercise, id) = note.split_once(": ").unwrap();
            *from_csv.entry((exercise.into(), id.into())).or_default() += 1;
        }
    }
    assert_eq!(counted, from_csv, "the summary's mistakes and the CSV's notes");
    counted
}

/// Students counted for each mistake, by exercise and mistake id.
pub type Counted = BTreeMap<(String, String), usize>;

/// A list of `summary.json`'s (`mistakes` or `stops`) as counts.
pub fn counted_in(list: &serde_json::Value) -> Counted {
    let count = |m: &serde_json::Value| {
        let at = (m["exercise"].as_str().unwrap().to_string(), m["mistake"].as_str().unwrap().to_string());
        (at, m["students"].as_u64().unwrap() as usize)
    };
    list.as_array().unwrap().iter().map(count).collect()
}

/// The class report made again from a grading's JSON lines (`out`, written to `dir/grades.jsonl`, whose path
/// it returns) by `anatomy exercises report`, without grading: the same `summary.json` and `index.html`
/// as the one in `report` that the grading wrote.
pub fn report_made_again_the_same(dir: &Path, out: &str, report: &Path) -> PathBuf {
    let grades = dir.join("grades.jsonl");
    std::fs::write(&grades, out).unwrap();
    let again = dir.join("again");
    let (code, _, err) = anatomy(&["exercises", "report", grades.to_str().unwrap(), "--out", again.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    for file in ["summary.json", "index.html"] {
        assert_eq!(
            std::fs::read_to_string(report.join(file)).unwrap(),
            std::fs::read_to_string(again.join(file)).unwrap(),
            "{file} made again"
        );
    }
    grades
}

/// The most the project's course (exercises/course.toml over the declaration's points) gives for every
/// exercise: what full marks are, read from the course rather than written as a number.
pub fn full_marks() -> f64 {
    use anatomy_grade::points::default_file;
    let course = anatomy_gradebook::export::load_course(&default_file()).unwrap();
    course.most(&course.assignment(None).unwrap())
}
