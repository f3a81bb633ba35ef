//! One class graded once, late hand-ins and an extension included, read through every output that shows
//! its points: the grade sheet's CSV, the gradebook, Gradescope's, PrairieLearn's and GitHub Classroom's
//! results. Every cell must read the same points, to the hundredth, as the one scoring function gives
//! them (`anatomy_grade::points::score`). Outcomes are made here: no grading, no LibTorch.
//!
//! With `SCORING_DUMP=FOLDER`, every output is also written to FOLDER, to compare them byte for byte
//! before and after a change of the scoring.
use std::path::Path;

use anatomy_gradebook::export::{ExportRequest, Format};
use anatomy_gradebook::runs::Run;
use anatomy_gradebook::Gradebook;
use anatomy_intake::roster;
use time::OffsetDateTime;

use crate::helpers::scratch;
use crate::{classroom, gradescope, prairielearn};
use anatomy_course::{Exercise, Outcome, Status, EXERCISES};
use anatomy_grade::points::{self, CourseFile};
use anatomy_grade::sandbox::Tier;
use anatomy_report::sheet::{Extension, Row, Sheet};

const COURSE: &str = "[points]\nlayer_norm = 4.45\nsplit_heads = 3.33\n\
    [late]\npenalty_per_day = 0.1\nmax_days = 5\n\
    [assignments.hw]\nexercises = [\"layer_norm\", \"cross_attention\", \"split_heads\"]\n\
    due = \"2026-03-01T12:00:00Z\"\n";

const ROSTER: &str = "Student,ID,SIS User ID,SIS Login ID,Section,hw (501),Current Score\n\
    \"    Points Possible\",,,,,30,\n\
    \"Lovelace, Ada\",101,S-1,ada,Mon,,\n\
    \"Hopper, Grace\",102,S-2,grace,Mon,,\n\
    \"Liskov, Barbara\",103,S-3,lin,Tue,,\n\
    \"Thompson, Ken\",104,S-4,ken,Tue,,\n\
    \"Ritchie, Dennis\",105,S-5,mo,Tue,,\n\
    \"Bosworth, Bo\",106,S-6,bo,Tue,,\n";

fn at(text: &str) -> OffsetDateTime {
    anatomy_intake::times::parse_time(text).unwrap()
}

/// Writes `text` to `SCORING_DUMP/name` when the variable is set.
fn dump(name: &str, text: &str) {
    if let Some(folder) = std::env::var_os("SCORING_DUMP") {
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(Path::new(&folder).join(name), text).unwrap();
    }
}

/// `(login, hand-in time, extension, [cross_attention's status, split_heads' parts passed of 2])`: on
/// time, two days late, a day late from an extension (three from the class's date), past the policy's
/// five days, without a hand-in time, and three days late (whose cells, each rounded up, add up to a
/// hundredth more than their sum rounded).
type Student = (&'static str, Option<&'static str>, Option<&'static str>, Status, usize);
const CLASS: [Student; 6] = [
    ("ada", Some("2026-03-01T11:00:00Z"), None, Status::Passed, 1),
    ("grace", Some("2026-03-02T18:00:00Z"), None, Status::Failed, 1),
    ("lin", Some("2026-03-04T00:00:00Z"), Some("2026-03-03T12:00:00Z"), Status::Passed, 1),
    ("ken", Some("2026-03-08T13:00:00Z"), None, Status::Passed, 2),
    ("mo", None, None, Status::Failed, 0),
    ("bo", Some("2026-03-04T06:00:00Z"), None, Status::Failed, 1),
];

fn outcome(e: &'static Exercise, status: Status, parts: Option<(usize, usize)>) -> Outcome {
    Outcome {
        name: e.name,
        label: e.name.into(),
        status,
        message: format!("message of {}", e.name),
        parts,
        mistake: None,
        output: None,
    }
}

/// The class's rows, each under the label the gradebook gave the student.
fn rows(book: &Gradebook, chosen: &[&'static Exercise]) -> Vec<Row> {
    CLASS
        .iter()
        .map(|&(login, handed_in, extension, cross, split)| {
            let statuses = [(Status::Passed, None), (cross, None), (Status::Failed, Some((split, 2)))];
            Row {
                student: book.student(login).unwrap().label,
                outcomes: chosen.iter().zip(statuses).map(|(e, (s, p))| outcome(e, s, p)).collect(),
                handed_in: handed_in.map(at),
                extension: extension.map(|d| Extension { due: at(d), reason: "an illness".into() }),
            }
        })
        .collect()
}

/// The class graded once: the course, its assignment, the gradebook with the run recorded and each
/// extension given, and the rows.
fn graded(dir: &Path) -> (CourseFile, points::Assignment, Gradebook, Vec<Row>) {
    let course =
        CourseFile::parse(Path::new("course.toml"), COURSE, &anatomy_gradebook::export::course_keys()).unwrap();
    let hw = course.assignment(Some("hw")).unwrap();
    let mut book = Gradebook::open_or_create(&dir.join("gradebook.sqlite")).unwrap();
    book.import_roster(&roster::read(ROSTER.as_bytes()).unwrap()).unwrap();
    let rows = rows(&book, &hw.exercises);
    let sheet = Sheet { chosen: &hw.exercises, course: &course, tier: &Tier::None, due: hw.due };
    let sources: Vec<anatomy_grade::grading::Source> =
        hw.exercises.iter().map(|e| Ok(e.name.as_bytes().to_vec())).collect();
    let keyed: Vec<(i64, &Row, &[anatomy_grade::grading::Source])> =
        CLASS.iter().zip(&rows).map(|(c, r)| (book.student(c.0).unwrap().key, r, sources.as_slice())).collect();
    book.record(&Run::of("hw", &sheet, &keyed, 7, "anatomy (test)")).unwrap();
    for (c, row) in CLASS.iter().zip(&rows) {
        if let Some(e) = &row.extension {
            let student = book.student(c.0).unwrap();
            book.extend(&student, &hw, Some(e.due), None, &e.reason, "test").unwrap();
        }
    }
    (course, hw, book, rows)
}

/// Not a test but a tool, which passes whatever it writes: `SCORING_DUMP=DIR cargo test -p anatomy-platforms
/// --lib every_output -- --ignored` writes every output of the late class to DIR, for a byte-for-byte diff of
/// two commits' scoring.
#[test]
#[ignore = "a tool for a byte-for-byte comparison: set SCORING_DUMP and pass --ignored"]
fn every_output_of_a_late_class_is_written_as_before() {
    let dir = scratch("scoring-dump");
    let (course, hw, book, rows) = graded(&dir);
    let sheet = Sheet { chosen: &hw.exercises, course: &course, tier: &Tier::None, due: hw.due };
    dump("sheet.csv", &sheet.csv(&rows).unwrap());
    dump("table.md", &sheet.table(&rows));
    let lines: Vec<String> = rows.iter().map(|r| sheet.json(r).to_string()).collect();
    dump("lines.jsonl", &lines.join("\n"));
    let feedback: Vec<String> = rows.iter().map(|r| sheet.feedback(r)).collect();
    dump("feedback.md", &feedback.join("\n----\n"));
    dump("gradebook-show.md", &book.show(&course, Some(&hw)).unwrap());
    let request = ExportRequest { format: Format::Csv, assignment: Some(&hw), identify: None, unlimited_grades: false };
    dump("gradebook-export.csv", &book.export(&course, request).unwrap().text);
    for row in &rows {
        let late = sheet.days_late(row).zip(course.late);
        let gs = gradescope::results_of(&row.outcomes, &Tier::None, &hw.exercises, &course, late);
        dump(&format!("gradescope-{}.json", row.student), &serde_json::to_string_pretty(&gs).unwrap());
        let pl = prairielearn::results_of(&row.outcomes, &Tier::None, &hw.exercises, &course);
        dump(&format!("prairielearn-{}.json", row.student), &serde_json::to_string_pretty(&pl).unwrap());
        let gh = classroom::report_of(&row.outcomes, &Tier::None, &hw.exercises, &course, 300).unwrap();
        dump(&format!("classroom-{}.txt", row.student), &format!("{}\n{}\n{}", gh.encoded, gh.all_passed, gh.summary));
    }
    // Every exercise at the course's own points, every status, two days late.
    let course = anatomy_gradebook::export::load_course(&points::default_file()).unwrap();
    let chosen: Vec<&'static Exercise> = EXERCISES.iter().collect();
    let statuses = [Status::Passed, Status::Failed, Status::DoesNotCompile, Status::NotDone];
    let outcomes: Vec<Outcome> = EXERCISES
        .iter()
        .enumerate()
        .map(|(i, e)| match e.name {
            "split_heads" => outcome(e, Status::Failed, Some((1, 2))),
            _ => outcome(e, statuses[i % 4], None),
        })
        .collect();
    let late = Some((2, points::Late { penalty_per_day: 0.1, max_days: 5 }));
    for (name, late) in [("late", late), ("on-time", None)] {
        let gs = gradescope::results_of(&outcomes, &Tier::None, &chosen, &course, late);
        dump(&format!("all-gradescope-{name}.json"), &serde_json::to_string_pretty(&gs).unwrap());
    }
    let pl = prairielearn::results_of(&outcomes, &Tier::None, &chosen, &course);
    dump("all-prairielearn.json", &serde_json::to_string_pretty(&pl).unwrap());
    let gh = classroom::report_of(&outcomes, &Tier::None, &chosen, &course, 300).unwrap();
    dump("all-classroom.txt", &format!("{}\n{}\n{}", gh.encoded, gh.all_passed, gh.summary));
}

/// The points of each cell as one output shows them, by student, in the assignment's order.
type Cells = std::collections::BTreeMap<String, Vec<f64>>;

/// A CSV line's cells, quotes taken off (a quoted cell may hold a comma, as "Lovelace, Ada" does).
fn split(line: &str) -> Vec<String> {
    let (mut cells, mut cell, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    cells.push(cell);
    cells
}

/// The numbers of a CSV row's columns `from..from + n` (the row's first cell is the student's label).
fn csv_cells(text: &str, from: usize, n: usize) -> Cells {
    text.lines()
        .skip(1)
        .map(|line| {
            let cells = split(line);
            (cells[0].clone(), cells[from..from + n].iter().map(|c| c.parse().unwrap()).collect())
        })
        .collect()
}

#[test]
fn the_sheet_the_gradebook_and_the_three_platforms_agree_on_every_cell_of_a_late_class() {
    let dir = scratch("scoring-agreement");
    let (course, hw, book, rows) = graded(&dir);
    let sheet = Sheet { chosen: &hw.exercises, course: &course, tier: &Tier::None, due: hw.due };
    let n = hw.exercises.len();
    let scored: Cells = rows
        .iter()
        .map(|r| (r.student.clone(), r.outcomes.iter().map(|o| sheet.score(r, o).points).collect()))
        .collect();
    let request = ExportRequest { format: Format::Csv, assignment: Some(&hw), identify: None, unlimited_grades: false };
    let gradebook: Cells = book
        .standings(&course, &hw)
        .unwrap()
        .iter()
        .map(|s| (s.student.label.clone(), s.cells.iter().map(|c| c.points().unwrap()).collect()))
        .collect();
    let mut outputs = vec![
        ("the grade sheet's CSV", csv_cells(&sheet.csv(&rows).unwrap(), 1, n)),
        ("the gradebook", gradebook),
        ("the gradebook's CSV export", csv_cells(&book.export(&course, request).unwrap().text, 6, n)),
    ];
    let (mut gs, mut pl, mut gh) = (Cells::new(), Cells::new(), Cells::new());
    let mut totals = Vec::new();
    for row in &rows {
        let late = sheet.days_late(row).zip(course.late);
        let of = |tests: &serde_json::Value, key: &str| -> Vec<f64> {
            tests.as_array().unwrap().iter().map(|t| t[key].as_f64().unwrap()).collect()
        };
        let g = gradescope::results_of(&row.outcomes, &Tier::None, &hw.exercises, &course, late);
        gs.insert(row.student.clone(), of(&g["tests"], "score"));
        let p = prairielearn::results_late(&row.outcomes, &Tier::None, &hw.exercises, &course, late);
        pl.insert(row.student.clone(), of(&p["tests"], "points"));
        let c = classroom::report_late(&row.outcomes, &Tier::None, &hw.exercises, &course, 300, late).unwrap();
        let decoded: serde_json::Value = serde_json::from_slice(&base64::decode(&c.encoded).unwrap()).unwrap();
        gh.insert(row.student.clone(), of(&decoded["tests"], "score"));
        totals.push((
            row.student.clone(),
            g["score"].as_f64().unwrap(),
            anatomy_report::sheet::points(sheet.total(row)),
        ));
    }
    outputs.extend([("Gradescope's results", gs), ("PrairieLearn's results", pl), ("GitHub Classroom's result", gh)]);
    let hundredths = |cells: &Cells| -> Vec<(String, Vec<i64>)> {
        cells.iter().map(|(s, p)| (s.clone(), p.iter().map(|x| (x * 100.0).round() as i64).collect())).collect()
    };
    for (name, cells) in &outputs {
        assert_eq!(hundredths(cells), hundredths(&scored), "{name} against the one score");
    }
    // The late cells are there, and scored: two days late keeps 80 %, past five days nothing, the extension
    // counts a day from its own date.
    assert_eq!(scored["grace"], [3.56, 0.0, 1.34]);
    assert_eq!((scored["ken"].iter().sum::<f64>(), scored["lin"][0]), (0.0, 4.01));
    // Gradescope's total is the sheet's: the rounded cells added (4.29, not 4.28 of the unrounded sum).
    for (student, gradescope, csv) in totals {
        assert_eq!(anatomy_report::sheet::points(gradescope), csv, "{student}'s total");
    }
}
