//! A term at the scale of a large course, made up: 1,000 students, 10 assignments covering every
//! exercise, one run of each assignment for the whole class (a cell per student and exercise, with its file),
//! then 100 single-student regrades. It checks what comes out (every row, every total) and prints how long
//! recording, a history and each export took, the figures docs/instructors.md gives; speed is measured
//! here, never asserted (a timed test only measures the machine it runs on).
use std::time::Instant;

use anatomy_course::{Status, EXERCISES};
use anatomy_gradebook::export::{ExportRequest, Format, MoodleId};
use anatomy_gradebook::runs::{GradeCell, Run};
use anatomy_gradebook::{Gradebook, FILE_NAME};

#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;
use test_dir::TestDir;

const STUDENTS: usize = 1000;

#[test]
fn a_term_of_a_thousand_students_and_ten_assignments() {
    let dir = TestDir::new("gradebook-scale");
    // Ten assignments: every exercise in course order, as evenly as they divide (the first hold one more).
    let mut toml = String::new();
    let mut at = 0;
    for a in 0..10 {
        let n = EXERCISES.len() / 10 + usize::from(a < EXERCISES.len() % 10);
        let names: Vec<String> = EXERCISES[at..at + n].iter().map(|e| format!("{:?}", e.name)).collect();
        toml += &format!("[assignments.week{a}]\nexercises = [{}]\ndue = \"2026-12-01T23:59:00Z\"\n", names.join(", "));
        at += n;
    }
    std::fs::write(dir.join("course.toml"), toml).unwrap();
    let course = anatomy_gradebook::export::load_course(&dir.join("course.toml")).unwrap();
    // As Canvas exports it (the Canvas export back needs Canvas's ids).
    let roster: String = std::iter::once("Student,ID,SIS User ID,SIS Login ID,Section\n".to_string())
        .chain((0..STUDENTS).map(|i| format!("\"Student, Number {i}\",{},,s{i:04},{}\n", 10_000 + i, i % 12)))
        .collect();
    let mut book = Gradebook::open_or_create(&dir.join(FILE_NAME)).unwrap();
    book.import_roster(&anatomy_intake::roster::read(roster.as_bytes()).unwrap()).unwrap();
    let keys: Vec<i64> = book.students().unwrap().iter().map(|s| s.key).collect();
    let course_ref = &course;
    let run = |assignment: &anatomy_grade::points::Assignment, students: &[i64], round: usize| Run {
        assignment: assignment.name.clone(),
        due: None,
        grader: "anatomy (scale test)".into(),
        seed: round as i64,
        tier: "bubblewrap".into(),
        exercises: assignment.exercises.iter().map(|e| e.name).collect(),
        cells: students
            .iter()
            .flat_map(|&k| {
                assignment.exercises.iter().map(move |e| GradeCell {
                    student: k,
                    exercise: e.name.into(),
                    // Every seventh student fails, so that totals differ.
                    status: if k % 7 == 0 { Status::Failed } else { Status::Passed },
                    mistake: (k % 7 == 0).then(|| "unnamed".into()),
                    message: String::new(),
                    parts: None,
                    points: if k % 7 == 0 { 0.0 } else { course_ref.max(e.name) },
                    max_points: course_ref.max(e.name),
                    handed_in: None,
                    due: None,
                    late_days: Some(0),
                    source: Some(
                        format!("pub fn {}() {{ /* student {k}, round {round} */ }}\n{}", e.name, "// …\n".repeat(60))
                            .into_bytes(),
                    ),
                })
            })
            .collect(),
    };
    let started = Instant::now();
    for a in &course.assignments {
        book.record(&run(a, &keys, 0)).unwrap();
    }
    let recording = started.elapsed();
    let started = Instant::now();
    for (i, &k) in keys.iter().take(100).enumerate() {
        book.record(&run(&course.assignments[i % 10], &[k], 1)).unwrap();
    }
    let regrades = started.elapsed();
    let started = Instant::now();
    let history = book.history(&book.student("s0003").unwrap()).unwrap();
    let history_time = started.elapsed();
    assert_eq!(history.len(), 11, "ten runs of the class, one regrade");
    let mut exports = Vec::new();
    for &format in <Format as clap::ValueEnum>::value_variants() {
        let name = clap::ValueEnum::to_possible_value(&format).unwrap().get_name().to_string();
        let started = Instant::now();
        let request =
            ExportRequest { format, assignment: None, identify: Some(MoodleId::Username), unlimited_grades: false };
        let text = book.export(&course, request).unwrap().text;
        exports.push((name.clone(), started.elapsed()));
        let rows = csv::ReaderBuilder::new().has_headers(false).from_reader(text.as_bytes()).records().count();
        let header_rows = if format == Format::Canvas { 2 } else { 1 };
        assert_eq!(rows, STUDENTS + header_rows, "{name}");
    }
    // Every student's term total, from our CSV: full marks but for every seventh student's nothing.
    let ours = book
        .export(
            &course,
            ExportRequest { format: Format::Csv, assignment: None, identify: None, unlimited_grades: false },
        )
        .unwrap()
        .text;
    let mut reader = csv::Reader::from_reader(ours.as_bytes());
    let total = reader.headers().unwrap().iter().position(|h| h == "total").unwrap();
    let full: f64 = EXERCISES.iter().map(|e| course.max(e.name)).sum();
    let keys_by_login: std::collections::BTreeMap<String, i64> =
        book.students().unwrap().into_iter().map(|s| (s.login, s.key)).collect();
    for record in reader.records() {
        let record = record.unwrap();
        let key = keys_by_login[&record[4]];
        let expected = if key % 7 == 0 { 0.0 } else { full };
        assert_eq!(record[total].parse::<f64>().unwrap(), expected, "{}", &record[0]);
    }
    let size = std::fs::metadata(dir.join(FILE_NAME)).unwrap().len();
    eprintln!(
        "scale: recorded 10 runs of {STUDENTS} students ({} cells) in {:.2} s, 100 one-student regrades in {:.2} s; \
         a history in {:.3} s; exports {}; the file {} MiB",
        STUDENTS * EXERCISES.len(),
        recording.as_secs_f64(),
        regrades.as_secs_f64(),
        history_time.as_secs_f64(),
        exports.iter().map(|(n, t)| format!("{n} {:.2} s", t.as_secs_f64())).collect::<Vec<_>>().join(", "),
        size >> 20
    );
}
