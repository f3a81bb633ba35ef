//! The gradebook's own tests: the roster, runs and what counts, overrides, extensions, history and
//! exports on made-up runs, and the promises of a database — two gradings at once, a grading killed while
//! it writes, a full disk, a damaged, foreign or newer file, an older schema migrated forward.
use std::path::Path;

use anatomy_course::Status;
use anatomy_grade::points::{Assignment, CourseFile};
use anatomy_intake::roster;

use crate::export::{ExportRequest, Exported, Format, MoodleId};
use crate::runs::{GradeCell, Run};
use crate::test_dir::TestDir;
use crate::*;
use csv_read_back::read_back;

#[path = "../../../tests/common/csv_read_back.rs"]
mod csv_read_back;
mod hostile;
mod term;

/// An export of every assignment, or of one; Moodle's by ID number.
pub(crate) fn export(book: &Gradebook, course: &CourseFile, format: Format, one: Option<&str>) -> Result<Exported> {
    let assignment = one.map(|a| course.assignment(Some(a)).unwrap());
    let identify = Some(MoodleId::IdNumber);
    book.export(course, ExportRequest { format, assignment: assignment.as_ref(), identify, unlimited_grades: false })
}

/// The test's own folder `anatomy-…-gradebook-{name}`, removed when the test ends, passed or failed.
pub(crate) fn scratch(name: &str) -> TestDir {
    TestDir::new(&format!("gradebook-{name}"))
}

/// A course of two assignments, `attention` (due 1 December) and `decoder` (no due date).
pub(crate) fn course(dir: &Path) -> CourseFile {
    let file = dir.join("course.toml");
    std::fs::write(
        &file,
        "[late]\npenalty_per_day = 0.1\nmax_days = 5\n\
         [assignments.attention]\nexercises = [\"scaled_dot_product\", \"attention_head\"]\ndue = \"2026-12-01T23:59:00Z\"\n\
         [assignments.decoder]\nexercises = [\"cross_attention\"]\n",
    )
    .unwrap();
    crate::export::load_course(&file).unwrap()
}

pub(crate) const CANVAS: &str =
    "Student,ID,SIS User ID,SIS Login ID,Section,attention (501),decoder (502),Current Score\n\
    \"    Points Possible\",,,,,10,20,\n\
    \"Lovelace, Ada\",101,S-1,ada,Mon,,,\n\
    \"Hopper, Grace\",102,S-2,grace,Mon,,,\n\
    \"=HYPERLINK(\"\"http://x\"\"), Eve\",103,S-3,eve,Tue,,,\n";

fn book(dir: &Path) -> Gradebook {
    let mut book = Gradebook::open_or_create(&dir.join(FILE_NAME)).unwrap();
    book.import_roster(&roster::read(CANVAS.as_bytes()).unwrap()).unwrap();
    book
}

/// A made-up run of `assignment`: each `(login, exercise, status, points)` one cell.
pub(crate) fn run(book: &Gradebook, assignment: &str, cells: &[(&str, &str, Status, f64)]) -> Run {
    let cells = cells
        .iter()
        .map(|&(who, exercise, status, points)| GradeCell {
            student: book.student(who).unwrap().key,
            exercise: exercise.into(),
            status,
            mistake: (status == Status::Failed).then(|| "unbiased_variance".into()),
            message: format!("{exercise} of {who}"),
            parts: None,
            points,
            max_points: 5.0,
            handed_in: None,
            due: None,
            late_days: Some(0),
            source: Some(format!("pub fn {exercise}() {{ /* {who} */ }}").into_bytes()),
        })
        .collect();
    Run {
        assignment: assignment.into(),
        due: None,
        grader: "anatomy 0.1.0 (test)".into(),
        seed: 7,
        tier: "bubblewrap".into(),
        exercises: vec!["scaled_dot_product", "attention_head"],
        cells,
    }
}

fn attention(course: &CourseFile) -> Assignment {
    course.assignment(Some("attention")).unwrap()
}

fn totals(book: &Gradebook, a: &Assignment) -> Vec<(String, Option<f64>)> {
    book.standings(&course(book.path().parent().unwrap()), a)
        .unwrap()
        .iter()
        .map(|s| (s.student.label.clone(), s.total()))
        .collect()
}

/// The course-file keys the formats read; the grader's and the report's tests, a stage below this crate,
/// spell the same list out (`TITLE_KEYS` in crates/grade/src/points/tests.rs): this fails when a format adds
/// or drops one, to say those must follow.
#[test]
fn the_formats_read_titles_under_canvas_and_moodle() {
    assert_eq!(crate::export::course_keys(), ["canvas", "moodle"]);
}

#[test]
fn a_roster_is_imported_by_platform_id_and_importing_again_never_makes_one_student_two() {
    let dir = scratch("roster");
    let mut book = book(&dir);
    let labels: Vec<String> = book.students().unwrap().iter().map(|s| s.label.clone()).collect();
    assert_eq!(labels, ["ada", "eve", "grace"]);
    assert_eq!(book.canvas_columns().unwrap(), ["attention (501)", "decoder (502)"]);
    // Grace changes her login, Ada leaves the course, Bob joins.
    let again = "name,id,login,section\nGrace Hopper,102,ghopper,Mon\nEve,103,eve,Tue\nBob,104,,Wed\n";
    let imported = book.import_roster(&roster::read(again.as_bytes()).unwrap()).unwrap();
    assert_eq!((imported.added, imported.updated, imported.unchanged), (1, 2, 0), "Eve's name changed too");
    assert_eq!(imported.not_listed, ["ada"]);
    assert_eq!(book.student("102").unwrap().label, "ghopper");
    assert_eq!(book.student("S-1").unwrap().label, "ada", "kept, with their runs");
    assert_eq!(book.student("104").unwrap().label, "104", "no login: the platform id");
    assert!(book.student("nobody").unwrap_err().to_string().contains("no student \"nobody\" in the roster"));
    // Only Ada is still Canvas's: a Canvas file holds her alone and names who was left out.
    let everyone: Vec<(&str, &str, Status, f64)> =
        ["ada", "104", "eve", "ghopper"].iter().map(|&who| (who, "scaled_dot_product", Status::Passed, 5.0)).collect();
    book.record(&run(&book, "attention", &everyone)).unwrap();
    let exported = export(&book, &course(&dir), Format::Canvas, Some("attention")).unwrap();
    let ids: Vec<String> =
        csv::Reader::from_reader(exported.text.as_bytes()).records().skip(1).map(|r| r.unwrap()[1].into()).collect();
    assert_eq!(ids, ["101"]);
    assert_eq!(
        exported.warnings,
        ["left out, since Canvas's export does not list them and their ids are not Canvas's: 104, eve, ghopper"]
    );
}

#[test]
fn the_latest_run_counts_unless_an_override_stands_and_the_history_says_how_each_came_to_be() {
    let dir = scratch("runs");
    let course = course(&dir);
    let mut book = book(&dir);
    let a = attention(&course);
    assert_eq!(totals(&book, &a), [("ada".into(), None), ("eve".into(), None), ("grace".into(), None)]);
    let first = run(
        &book,
        "attention",
        &[
            ("ada", "scaled_dot_product", Status::Passed, 5.0),
            ("ada", "attention_head", Status::Failed, 0.0),
            ("grace", "scaled_dot_product", Status::Passed, 5.0),
            ("grace", "attention_head", Status::Passed, 5.0),
        ],
    );
    assert_eq!(book.record(&first).unwrap(), 1);
    // Ada's attention_head regraded alone after a fix: her other cell keeps the first run's.
    let mut regrade = run(&book, "attention", &[("ada", "attention_head", Status::Passed, 5.0)]);
    regrade.exercises = vec!["attention_head"];
    assert_eq!(book.record(&regrade).unwrap(), 2);
    assert_eq!(totals(&book, &a), [("ada".into(), Some(10.0)), ("eve".into(), None), ("grace".into(), Some(10.0))]);
    let ada = book.student("ada").unwrap();
    book.set_override(&ada, "attention_head", Some(3.5), 5.0, "copied the helper from a classmate", "lecturer")
        .unwrap();
    assert_eq!(totals(&book, &a)[0].1, Some(8.5), "the override stands over the runs");
    // A later run does not undo it; withdrawing does.
    book.record(&run(&book, "attention", &[("ada", "attention_head", Status::Passed, 5.0)])).unwrap();
    assert_eq!(totals(&book, &a)[0].1, Some(8.5));
    book.set_override(&ada, "attention_head", None, 5.0, "settled with the student", "lecturer").unwrap();
    assert_eq!(totals(&book, &a)[0].1, Some(10.0));
    let err = book.set_override(&ada, "attention_head", Some(6.0), 5.0, "bonus", "lecturer").unwrap_err();
    assert_eq!(err.to_string(), "--points 6: give a number from 0 to 5, the most attention_head is worth");
    assert!(book
        .set_override(&ada, "attention_head", Some(1.0), 5.0, " ", "x")
        .unwrap_err()
        .to_string()
        .starts_with("say why"));
    let history: Vec<String> = book.history(&ada).unwrap().iter().map(|e| e.line()).collect();
    assert_eq!(history.len(), 5, "{history:#?}");
    assert!(history[0].contains("run 1 of attention (anatomy 0.1.0 (test), seed 7, bubblewrap): attention_head failed (unbiased_variance) 0/5; scaled_dot_product passed 5/5"), "{}", history[0]);
    assert!(history[1].contains("run 2 of attention") && history[1].ends_with("attention_head passed 5/5"));
    assert!(
        history[2].contains("override of attention_head: 3.50 points, by lecturer: copied the helper"),
        "{history:#?}"
    );
    assert!(history[3].contains("run 3 of attention"));
    assert!(history[4].contains("override of attention_head withdrawn by lecturer: settled with the student"));
    // The bytes graded are kept once each, by their hash.
    let latest = book.latest_cells("attention").unwrap();
    let sha = latest[&(ada.key, "attention_head".to_string())].source.clone().unwrap();
    assert_eq!(book.source(&sha).unwrap(), b"pub fn attention_head() { /* ada */ }");
}

#[test]
fn an_extension_is_a_due_date_of_ones_own_with_a_reason_and_needs_a_due_date_to_extend() {
    let dir = scratch("extensions");
    let course = course(&dir);
    let mut book = book(&dir);
    let grace = book.student("grace").unwrap();
    let due = book.extend(&grace, &attention(&course), None, Some(3), "illness (note on file)", "lecturer").unwrap();
    assert_eq!(anatomy_grade::points::format_time(due), "2026-12-04T23:59:00Z");
    let extensions = book.extensions("attention").unwrap();
    assert_eq!((extensions[&grace.key].reason.as_str(), extensions.len()), ("illness (note on file)", 1));
    let decoder = course.assignment(Some("decoder")).unwrap();
    let err = book.extend(&grace, &decoder, None, Some(3), "illness", "lecturer").unwrap_err().to_string();
    assert!(err.starts_with("the assignment decoder has no due date, so nobody is late"), "{err}");
    assert!(book
        .extend(&grace, &attention(&course), None, None, "x", "y")
        .unwrap_err()
        .to_string()
        .contains("either as --due"));
    let history = book.history(&grace).unwrap();
    assert_eq!(
        history[0].line().split("  ").nth(1),
        Some("extension of attention to 2026-12-04T23:59:00Z, by lecturer: illness (note on file)")
    );
}

#[test]
fn every_export_puts_each_row_on_its_student_by_the_platforms_ids_and_runs_no_formula() {
    let dir = scratch("exports");
    let course = course(&dir);
    let mut book = book(&dir);
    book.record(&run(
        &book,
        "attention",
        &[
            ("ada", "scaled_dot_product", Status::Passed, 5.0),
            ("ada", "attention_head", Status::Failed, 0.0),
            ("eve", "scaled_dot_product", Status::Passed, 4.5),
            ("eve", "attention_head", Status::Passed, 4.5),
        ],
    ))
    .unwrap();
    book.record(&run(&book, "decoder", &[("ada", "cross_attention", Status::Passed, 20.0)])).unwrap();
    let read = |format, one: Option<&str>| {
        let exported = export(&book, &course, format, one).unwrap();
        let rows = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(exported.text.as_bytes())
            .records()
            .map(|r| r.unwrap().iter().map(String::from).collect::<Vec<_>>())
            .collect::<Vec<_>>();
        (rows, exported)
    };
    // Both assignments: only Ada has a grade in each; Eve's empty decoder cell would clear one Canvas holds.
    let (canvas, exported) = read(Format::Canvas, None);
    assert_eq!(
        canvas[0],
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "attention (501)", "decoder (502)"]
    );
    assert_eq!(canvas[1][0], "    Points Possible");
    assert_eq!(canvas[1][5..], ["10", "20"]);
    assert_eq!(canvas[2][1..], ["101", "S-1", "ada", "Mon", "5", "20"]);
    assert_eq!(canvas.len(), 3, "{canvas:?}");
    assert_eq!(
        exported.warnings,
        [
            "no grade to send, so left out (an empty cell would clear a grade the platform holds): grace",
            "left out, with no grade in decoder (an empty cell would clear a grade the platform holds): eve; export each assignment alone (--assignment NAME) to send theirs",
        ]
    );
    // One assignment: everyone graded in it.
    let (canvas, exported) = read(Format::Canvas, Some("attention"));
    assert_eq!(canvas[0][5..], ["attention (501)"]);
    let by_id = |rows: &[Vec<String>], column: usize, id: &str| rows.iter().find(|r| r[column] == id).unwrap().clone();
    assert_eq!(by_id(&canvas, 1, "101")[5], "5", "Ada: half of attention");
    let eve = by_id(&canvas, 1, "103");
    assert_eq!((eve[0].as_str(), eve[5].as_str()), ("'=HYPERLINK(\"http://x\"), Eve", "9"));
    assert!(canvas.iter().all(|r| r[1] != "102"), "Grace was never graded: no row, so Canvas keeps what it holds");
    // Read back as a roster, our export is Canvas's own layout: the same students, ids and columns.
    let again = roster::read(exported.text.as_bytes()).unwrap();
    let ids = |r: roster::Roster| {
        let mut ids: Vec<_> = r.students.into_iter().map(|s| (s.id, s.sis_id, s.login, s.section)).collect();
        ids.sort();
        ids
    };
    let mut graded = ids(roster::read(CANVAS.as_bytes()).unwrap());
    graded.retain(|(id, ..)| id != "102");
    assert_eq!(ids(again.clone()), graded);
    assert!(again.students.iter().any(|s| s.name == "'=HYPERLINK(\"http://x\"), Eve"), "the formula stays quoted");
    assert_eq!(again.assignment_columns, ["attention (501)"]);
    let (moodle, _) = read(Format::Moodle, Some("attention"));
    assert_eq!(moodle[0], ["ID number", "Full name", "attention (Real)", "attention (Feedback)"]);
    assert_eq!(by_id(&moodle, 0, "S-1")[2..], ["5", "5 of 10 points"]);
    let (ours, _) = read(Format::Csv, None);
    assert_eq!(ours[0][6..9], ["attention: scaled_dot_product", "attention: attention_head", "attention: total"]);
    let ada = by_id(&ours, 0, "ada");
    assert_eq!((ada[6].as_str(), ada[7].as_str(), ada[8].as_str()), ("5", "0", "5"));
    assert!(ada[9].contains("attention_head: unbiased_variance"), "{ada:?}");
}

#[test]
fn text_that_names_two_students_is_refused_and_a_field_picks_one() {
    let dir = scratch("ambiguous");
    let course = course(&dir);
    let mut book = Gradebook::open_or_create(&dir.join(FILE_NAME)).unwrap();
    // Bob's login is Carol's platform id: "301" is two students' text.
    let plain = "name,id,sis_id,login\nBob,201,S-9,301\nCarol,301,,carol\n";
    book.import_roster(&roster::read(plain.as_bytes()).unwrap()).unwrap();
    let err = book.student("301").unwrap_err().to_string();
    assert!(
        err.starts_with("\"301\" names 2 students (301, carol): say which field you mean, e.g. login:301"),
        "{err}"
    );
    assert_eq!(book.student("id:301").unwrap().label, "carol");
    assert_eq!(book.student("login:301").unwrap().label, "301");
    assert_eq!(book.student("sis:S-9").unwrap().label, "301");
    assert!(book.student("sis:").is_err(), "an empty field never matches");
    // A folder named so is nobody's until it is renamed: never graded as the first one found.
    let class = dir.join("class");
    for folder in ["301", "carol"] {
        std::fs::create_dir_all(class.join(folder)).unwrap();
    }
    let matched = book.match_hand_ins(&class, None).unwrap();
    let found: Vec<&str> = matched.found.iter().map(|(s, _)| s.label.as_str()).collect();
    assert_eq!(found, ["carol"]);
    assert_eq!(matched.unmatched.len(), 1);
    assert!(
        matched.unmatched[0].starts_with("301: the login or id of 2 students (301, carol)"),
        "{:?}",
        matched.unmatched
    );
    let students = book.students().unwrap();
    let names: Vec<String> = students.iter().map(|s| crate::roster::unambiguous(&students, s)).collect();
    assert_eq!(names, ["label:301", "carol"], "what to call each so that `who` finds them alone");
    assert_eq!(book.student(&names[0]).unwrap().lms_id, "201");
    // Their ids are not Canvas's: a Canvas file is refused; Moodle's leaves out whoever has no ID number.
    book.record(&run(&book, "attention", &[("id:301", "scaled_dot_product", Status::Passed, 5.0)])).unwrap();
    book.record(&run(&book, "attention", &[("label:301", "scaled_dot_product", Status::Passed, 4.0)])).unwrap();
    let err = export(&book, &course, Format::Canvas, Some("attention")).unwrap_err().to_string();
    assert!(err.starts_with("no student was imported from Canvas's export, so no id is Canvas's"), "{err}");
    let moodle = export(&book, &course, Format::Moodle, Some("attention")).unwrap();
    let rows: Vec<&str> = moodle.text.lines().skip(1).collect();
    assert_eq!(rows, [r#""S-9","Bob",4,"4 of 10 points""#], "{}", moodle.text);
    assert!(
        moodle.warnings[0].starts_with("left out, with no ID number (Moodle's import refuses"),
        "{:?}",
        moodle.warnings
    );
    assert!(moodle.warnings[0].ends_with(": carol"), "{:?}", moodle.warnings);
}

#[test]
fn a_canvas_download_keeps_each_files_last_hand_in_and_says_who_canvas_marked_late() {
    let dir = scratch("download");
    let mut book = Gradebook::open_or_create(&dir.join(FILE_NAME)).unwrap();
    // Canvas's export without a column for the decoder: the export back says Canvas will make one.
    let only_attention =
        "Student,ID,SIS User ID,SIS Login ID,Section,attention (501)\n\"Lovelace, Ada\",101,S-1,ada,Mon,\n";
    book.import_roster(&roster::read(only_attention.as_bytes()).unwrap()).unwrap();
    let class = dir.join("download");
    std::fs::create_dir_all(&class).unwrap();
    for (name, text) in [
        ("lovelaceada_101_9001_layer_norm.rs", "first"),
        ("lovelaceada_101_9002_layer_norm-2.rs", "third"),
        ("lovelaceada_LATE_101_9003_layer_norm-10.rs", "last"),
        ("lovelaceada_101_9004_layer_norm-9.rs", "second to last"),
        ("lovelaceada_101_9005_week-1.ipynb", "{}"),
        ("lovelaceada_101_9006_week-2.ipynb", "{}"),
    ] {
        std::fs::write(class.join(name), text).unwrap();
    }
    let matched = book.match_hand_ins(&class, None).unwrap();
    let (ada, hand_in) = &matched.found[0];
    assert_eq!(std::fs::read_to_string(hand_in.find("layer_norm").unwrap()).unwrap(), "last");
    // Both notebooks are kept (a notebook's name is not its exercise), the later first.
    let anatomy_grade::handin::HandIn::Files(files) = hand_in else { panic!("a download's files") };
    let notebooks: Vec<_> =
        files.iter().filter(|(n, _)| n.ends_with(".ipynb")).map(|(_, p)| p.file_name().unwrap()).collect();
    assert_eq!(notebooks, ["lovelaceada_101_9006_week-2.ipynb", "lovelaceada_101_9005_week-1.ipynb"]);
    assert_eq!((ada.label.as_str(), matched.marked_late.as_slice()), ("ada", &["ada".to_string()][..]));
    assert!(matched.lines().iter().any(|l| l.starts_with("marked LATE by Canvas (a download has no hand-in time")));
    let cells = [("ada", "scaled_dot_product", Status::Passed, 5.0)];
    book.record(&run(&book, "attention", &cells)).unwrap();
    book.record(&run(&book, "decoder", &[("ada", "cross_attention", Status::Passed, 5.0)])).unwrap();
    let exported = export(&book, &course(&dir), Format::Canvas, None).unwrap();
    assert_eq!(exported.warnings.len(), 1);
    assert!(
        exported.warnings[0].starts_with("Canvas's export had no column titled \"decoder\" for decoder"),
        "{:?}",
        exported.warnings
    );
    let header = r#""Student","ID","SIS User ID","SIS Login ID","Section","attention (501)","decoder""#;
    assert!(exported.text.starts_with(&format!("{header}\n")), "{}", exported.text);
}

#[test]
fn two_gradings_at_once_both_land_whole() {
    let dir = scratch("together");
    let book = book(&dir);
    let path = book.path().to_path_buf();
    let cells: Vec<(&str, &str, Status, f64)> =
        (0..200).map(|_| ("ada", "scaled_dot_product", Status::Passed, 5.0)).collect();
    let mut made = run(&book, "attention", &cells);
    // 200 distinct cells: one student's exercise per cell is the key, so vary the exercise's name.
    for (i, c) in made.cells.iter_mut().enumerate() {
        c.exercise = format!("exercise_{i}");
    }
    std::thread::scope(|scope| {
        for _ in 0..2 {
            let (path, made) = (path.clone(), made.clone());
            scope.spawn(move || {
                let mut mine = Gradebook::open(&path).unwrap();
                for _ in 0..25 {
                    mine.record(&made).unwrap();
                }
            });
        }
    });
    let counts: Vec<i64> = {
        let mut q = book.conn().prepare("SELECT count(*) FROM cells GROUP BY run").unwrap();
        q.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(counts.len(), 50, "every run of both gradings");
    assert!(counts.iter().all(|&n| n == 200), "each whole: {counts:?}");
}

/// Not a test on its own: the writer the kill test starts in a process of its own (by this test's name,
/// with `ANATOMY_GRADEBOOK_WRITER` set), recording runs of 1,000 cells until it is killed, and saying so on
/// its standard output after each.
#[test]
fn writer_for_the_kill_test() {
    use std::io::Write;
    let Ok(path) = std::env::var("ANATOMY_GRADEBOOK_WRITER") else { return };
    let mut book = Gradebook::open(Path::new(&path)).unwrap();
    let mut made = run(&book, "attention", &[("ada", "scaled_dot_product", Status::Passed, 5.0)]);
    made.cells = (0..1000).map(|i| GradeCell { exercise: format!("exercise_{i}"), ..made.cells[0].clone() }).collect();
    loop {
        let id = book.record(&made).unwrap();
        writeln!(std::io::stdout(), "recorded run {id}").unwrap();
    }
}

#[test]
fn a_grading_killed_while_it_writes_leaves_every_run_whole_or_absent() {
    let dir = scratch("killed");
    let path = book(&dir).path().to_path_buf();
    // Killed at three moments after its first run is recorded, however slow the machine: a run of 1,000
    // cells takes milliseconds to write, so a kill lands inside one more often than not.
    for delay in [0, 13, 170] {
        let mut writer = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "tests::writer_for_the_kill_test", "--nocapture", "--test-threads=1"])
            .env("ANATOMY_GRADEBOOK_WRITER", &path)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut said = std::io::BufReader::new(writer.stdout.take().unwrap());
        let mut line = String::new();
        while !line.starts_with("recorded run") {
            line.clear();
            assert_ne!(std::io::BufRead::read_line(&mut said, &mut line).unwrap(), 0, "the writer ended");
        }
        std::thread::sleep(std::time::Duration::from_millis(delay));
        writer.kill().unwrap(); // SIGKILL: no destructor, no commit
        writer.wait().unwrap();
        let book = Gradebook::open(&path).unwrap();
        let check: String = book.conn().query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok");
        let mut q = book
            .conn()
            .prepare("SELECT r.id, count(c.run) FROM runs r LEFT JOIN cells c ON c.run = r.id GROUP BY r.id")
            .unwrap();
        let runs: Vec<(i64, i64)> =
            q.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
        assert!(!runs.is_empty(), "the writer said it recorded a run");
        assert!(runs.iter().all(|&(_, n)| n == 1000), "a run cut short: {runs:?}");
    }
}

#[test]
fn a_full_disk_fails_the_change_and_keeps_what_was_there() {
    let dir = scratch("full");
    let mut book = book(&dir);
    book.record(&run(&book, "attention", &[("ada", "scaled_dot_product", Status::Passed, 5.0)])).unwrap();
    // SQLite's own page limit stands for the disk: past it, a write fails as on a full disk (SQLITE_FULL).
    let pages: i64 = book.conn().query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
    book.conn().pragma_update(None, "max_page_count", pages + 2).unwrap();
    let mut big = run(&book, "attention", &[("grace", "attention_head", Status::Passed, 5.0)]);
    big.cells = (0..2000)
        .map(|i| GradeCell {
            exercise: format!("exercise_{i}"),
            source: Some(vec![i as u8; 4000]),
            ..big.cells[0].clone()
        })
        .collect();
    let err = book.record(&big).unwrap_err().to_string();
    assert!(err.contains("is full: nothing of this change was kept; free some space and do it again"), "{err}");
    assert_eq!(book.runs().unwrap(), 1);
    let check: String = book.conn().query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    book.conn().pragma_update(None, "max_page_count", 1_073_741_823).unwrap();
    assert_eq!(book.record(&big).unwrap(), 2, "once there is room, the same run lands");
}

#[test]
fn a_damaged_foreign_or_newer_file_is_refused_with_what_to_do() {
    let dir = scratch("refused");
    let open = |path: &Path| Gradebook::open(path).err().map(|e| e.to_string()).unwrap_or_default();
    let noise = dir.join("noise.sqlite");
    std::fs::write(&noise, vec![0x5a; 8192]).unwrap();
    assert!(open(&noise).ends_with("is not an SQLite file: give the gradebook's path, or restore it from a copy (a gradebook is one file; copy it to back it up)"), "{}", open(&noise));
    let foreign = dir.join("foreign.sqlite");
    rusqlite::Connection::open(&foreign).unwrap().execute_batch("CREATE TABLE t (x)").unwrap();
    assert!(open(&foreign).contains("an SQLite database, but not a gradebook"), "{}", open(&foreign));
    let newer = dir.join("newer.sqlite");
    drop(Gradebook::open_or_create(&newer).unwrap());
    rusqlite::Connection::open(&newer).unwrap().pragma_update(None, "user_version", 99).unwrap();
    assert!(
        open(&newer)
            .contains(&format!("gradebook schema 99; this one knows up to {}): update the project", schema::newest())),
        "{}",
        open(&newer)
    );
    assert!(open(&dir.join("none.sqlite")).contains("import a roster first"));
    // A real gradebook with one of its pages overwritten.
    let damaged = dir.join("damaged.sqlite");
    {
        let mut book = Gradebook::open_or_create(&damaged).unwrap();
        book.import_roster(&roster::read(CANVAS.as_bytes()).unwrap()).unwrap();
        for _ in 0..5 {
            book.record(&run(&book, "attention", &[("ada", "scaled_dot_product", Status::Passed, 5.0)])).unwrap();
        }
    }
    let mut bytes = std::fs::read(&damaged).unwrap();
    assert!(bytes.len() > 4 * 4096, "{} bytes", bytes.len());
    bytes[2 * 4096..3 * 4096].fill(0xa5);
    std::fs::write(&damaged, bytes).unwrap();
    assert!(open(&damaged).contains("is damaged: restore it from a copy"), "{}", open(&damaged));
}

#[test]
fn an_older_schema_is_migrated_forward_and_keeps_its_rows() {
    let dir = scratch("migrate");
    let path = dir.join(FILE_NAME);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(schema::MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "application_id", schema::APPLICATION_ID).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute("INSERT INTO students (name, lms_id, sis_id, login, section, label) VALUES ('Ada', '101', '', 'ada', '', 'ada')", []).unwrap();
    }
    let book = Gradebook::open(&path).unwrap();
    let version: i32 = book.conn().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, schema::newest());
    let index: i64 = book
        .conn()
        .query_row("SELECT count(*) FROM sqlite_schema WHERE name = 'cells_by_student'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(index, 1);
    assert_eq!(book.student("ada").unwrap().name, "Ada");
}

/// Issue 64's names, each as every export must hold it (read back, its quotes undone), and an honest one.
const HOSTILE: [(&str, &str); 6] = [
    ("Robert'); DROP TABLE students;--", "Robert'); DROP TABLE students;'--"),
    ("x;=1+2", "x;'=1+2"),
    ("a,=HYPERLINK(\"http://x\")", "a,'=HYPERLINK(\"http://x\")"),
    ("tab\t@SUM(1)", "tab\t'@SUM(1)"),
    ("=1+2", "'=1+2"),
    ("Núñez, José", "Núñez, José"),
];

#[test]
fn every_export_quotes_each_text_cell_and_no_piece_of_one_is_a_formula() {
    let dir = scratch("hostile-cells");
    let course = course(&dir);
    let mut book = Gradebook::open_or_create(&dir.join(FILE_NAME)).unwrap();
    // As a roster may hold them (a constructed one: a tab stays a tab), one section hostile too.
    let students = (0..HOSTILE.len())
        .map(|i| roster::LmsStudent {
            name: HOSTILE[i].0.into(),
            id: format!("{}", 201 + i),
            sis_id: format!("S-{i}"),
            login: format!("h{i}"),
            section: if i == 1 { "Mon;-1".into() } else { "Mon".into() },
            email: String::new(),
        })
        .collect();
    let columns = vec!["attention (501)".to_string(), "decoder (502)".to_string()];
    let roster = roster::Roster { origin: roster::Origin::Canvas, students, assignment_columns: columns };
    book.import_roster(&roster).unwrap();
    let logins: Vec<String> = (0..HOSTILE.len()).map(|i| format!("h{i}")).collect();
    let cells: Vec<(&str, &str, Status, f64)> = logins
        .iter()
        .flat_map(|l| {
            [
                (l.as_str(), "scaled_dot_product", Status::Passed, 5.0),
                (l.as_str(), "attention_head", Status::Failed, 0.0),
            ]
        })
        .collect();
    book.record(&run(&book, "attention", &cells)).unwrap();
    // Each export: its header rows, the columns of the name, the key, the section and the numbers.
    for (format, one, header_rows, name_at, key_at, section_at, numbers) in [
        (Format::Canvas, Some("attention"), 2, 0, 1, Some(4), &[5][..]),
        (Format::Moodle, Some("attention"), 1, 1, 0, None, &[2][..]),
        (Format::Csv, None, 1, 1, 4, Some(5), &[6, 7, 8, 10, 11, 13][..]),
    ] {
        let text = export(&book, &course, format, one).unwrap().text;
        let read = read_back(&text, numbers);
        assert_eq!(read.len(), header_rows + HOSTILE.len(), "{format:?}: {text}");
        for (i, (name, written)) in HOSTILE.iter().enumerate() {
            let key = match format {
                Format::Canvas => format!("{}", 201 + i),
                Format::Moodle => format!("S-{i}"),
                Format::Csv => format!("h{i}"),
            };
            let record = read.iter().find(|r| r[key_at] == key).unwrap();
            assert_eq!(&record[name_at], written, "{format:?}: {name:?}");
            assert_eq!(record[numbers[0]], "5", "{format:?}: {name:?}");
            if let Some(at) = section_at {
                assert_eq!(record[at], if i == 1 { "Mon;'-1" } else { "Mon" }, "{format:?}");
            }
        }
    }
}
