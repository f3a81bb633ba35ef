//! A term as a new instructor runs it from the docs (issue 65): Canvas's export as Canvas writes it, its test
//! student (and a student who merely chose its name), LATE marks of extended students listed apart, an
//! extension given after the grading, a late penalty on a whole assignment, Canvas titles of any
//! characters, Moodle's one identifier, its empty cells, its limit of 100 and what the rule against
//! formulas would change, a read-only gradebook and where the gradebook is kept — each read back as the
//! platform's own importer reads a file (`tests/platforms/importers.rs`).
use std::path::Path;

use anatomy_course::Status;
use anatomy_grade::points::{format_time, Assignment, CourseFile};
use anatomy_intake::roster;

use super::{course, export, run, scratch};
use crate::adjust::{late_entry, LateMark};
use crate::export::{ExportRequest, Format, MoodleId};
use crate::location::Location;
use crate::*;

#[path = "../../tests/platforms/canvas_course.rs"]
mod canvas_course;
#[path = "../../tests/platforms/importers.rs"]
mod importers;
use canvas_course::canvas_course;
use importers::*;

/// Canvas's gradebook export as Canvas writes it (`tests/rosters/canvas.csv`).
fn canvas_roster() -> roster::Roster {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/rosters/canvas.csv");
    crate::roster::read_roster(&path).unwrap()
}

/// A course of two assignments titled as Canvas titles them, due a week apart, with a late policy.
fn titled_course(dir: &Path) -> CourseFile {
    let file = dir.join("course.toml");
    std::fs::write(
        &file,
        "[late]\npenalty_per_day = 0.1\nmax_days = 5\n\
         [assignments.encoder]\nexercises = [\"scaled_dot_product\", \"attention_head\"]\ndue = \"2026-12-01T23:59:00Z\"\n\
         canvas = \"Encoder\"\n\
         [assignments.decoder]\nexercises = [\"cross_attention\"]\ndue = \"2026-12-08T23:59:00Z\"\n\
         canvas = \"Homework 2: Decoder (48214)\"\nmoodle = \"Assignment: Homework 2: Decoder\"\n",
    )
    .unwrap();
    crate::export::load_course(&file).unwrap()
}

fn canvas_book(dir: &Path) -> Gradebook {
    let mut book = Gradebook::open_or_create(&dir.join(FILE_NAME)).unwrap();
    book.import_roster(&canvas_roster()).unwrap();
    book
}

#[test]
fn canvas_s_own_export_is_read_whole_and_its_test_student_kept_apart_said_once() {
    let dir = scratch("test-student");
    let mut book = Gradebook::open_or_create(&dir.join(FILE_NAME)).unwrap();
    let imported = book.import_roster(&canvas_roster()).unwrap();
    assert_eq!((imported.added, imported.updated, imported.unchanged), (5, 0, 0), "the test student is not counted");
    assert_eq!(imported.test_students, ["Student, Test, id 48999"]);
    let line = imported.line(&book);
    assert_eq!(line.matches("Canvas's test student").count(), 1, "{line}");
    let labels: Vec<String> = book.students().unwrap().into_iter().map(|s| s.label).collect();
    assert_eq!(labels, ["ada", "alan", "bri", "eve", "grace"]);
    let bri = book.student("bri").unwrap();
    assert_eq!(
        (bri.name.as_str(), bri.sis_id.as_str(), bri.section.as_str()),
        ("Núñez \"Bri\", Brígida", "", "Transformers 101 - Tuesday")
    );
    // As Canvas writes it: last, in every section, with the login Canvas made for it (40 hex digits).
    let test = book.test_students().unwrap().remove(0);
    assert_eq!((test.lms_id.as_str(), test.sis_id.as_str(), test.login.len()), ("48999", "", 40));
    assert_eq!(test.section, "Transformers 101 - Monday and Transformers 101 - Tuesday");
    assert!(book.student("48999").is_err(), "no command finds the test student");
    assert_eq!(book.canvas_columns().unwrap(), ["Encoder (48213)", "Homework 2: Decoder (48214)"]);
    // Importing again changes nothing, and a roster without the test student does not call it missing.
    let again = book.import_roster(&canvas_roster()).unwrap();
    assert_eq!((again.unchanged, again.not_listed.len()), (5, 0));
    let mut without = canvas_roster();
    assert_eq!(without.students.pop().unwrap().id, "48999", "Canvas lists its test student last");
    assert_eq!(book.import_roster(&without).unwrap().not_listed, Vec::<String>::new());
    // Its hand-in in a download is set aside, neither graded nor unmatched.
    let class = dir.join("download");
    std::fs::create_dir_all(&class).unwrap();
    for name in ["studenttest_48999_9001_cross_attention.rs", "lovelaceada_101_9002_cross_attention.rs"] {
        std::fs::write(class.join(name), "pub fn f() {}").unwrap();
    }
    let matched = book.match_hand_ins(&class, None).unwrap();
    assert_eq!((matched.found.len(), matched.unmatched.len()), (1, 0));
    assert_eq!(matched.set_aside, ["studenttest_48999_9001_cross_attention.rs"]);
    assert!(matched.lines().contains(
        &"set aside, not graded: studenttest_48999_9001_cross_attention.rs (Canvas's test student)".to_string()
    ));
    // Grades of its own (a gradebook of before it was told apart): left out of every file, and said.
    let course = titled_course(&dir);
    let ada = book.student("ada").unwrap();
    let mut graded = run(&book, "decoder", &[("ada", "cross_attention", Status::Passed, 20.0)]);
    graded.cells.push(runs::GradeCell { student: test.key, ..graded.cells[0].clone() });
    book.record(&graded).unwrap();
    for &format in <Format as clap::ValueEnum>::value_variants() {
        let exported = export(&book, &course, format, Some("decoder")).unwrap();
        let said: Vec<&String> = exported.warnings.iter().filter(|w| w.contains("test student")).collect();
        assert_eq!(
            said,
            ["left out as Canvas's test student (its Student View, not one of the class), though the gradebook holds grades of theirs: Student, Test (id 48999)"],
            "{format:?}"
        );
        assert!(!exported.text.contains("48999") && exported.text.contains(&ada.sis_id), "{}", exported.text);
    }
}

#[test]
fn a_student_who_chose_the_name_test_student_but_has_an_sis_id_or_a_login_of_their_own_is_a_student() {
    let dir = scratch("named-test-student");
    let mut book = Gradebook::open_or_create(&dir.join(FILE_NAME)).unwrap();
    let text = "Student,ID,SIS User ID,SIS Login ID,Section,Encoder (48213)\n\
        \"    Points Possible\",,,,,10\n\
        \"Student, Test\",201,S-201,,Monday,\n\
        \"Test Student\",202,,tstudent,Monday,\n\
        \"Student, Test\",203,S-203,0a1b2c3d4e5f60718293a4b5c6d7e8f901234567,Monday,\n\
        \"Student, Test\",48999,,5f1e0c2a9b7d4e3f8a6c1b0d2e4f6a8c9b7d5e3f,Monday,\n";
    let imported = book.import_roster(&roster::read(text.as_bytes()).unwrap()).unwrap();
    assert_eq!((imported.added, imported.test_students.len()), (3, 1), "{imported:?}");
    let ids: Vec<String> = book.students().unwrap().into_iter().map(|s| s.lms_id).collect();
    assert_eq!(ids, ["203", "201", "202"], "by label: 203's login, 201's id, tstudent");
    assert_eq!(book.test_students().unwrap()[0].lms_id, "48999");
    // Decided once, at import: the column keeps it, and a roster that gives it an SIS id later makes a
    // student of it.
    let student: i64 =
        book.conn().query_row("SELECT test_student FROM students WHERE lms_id = '48999'", [], |r| r.get(0)).unwrap();
    assert_eq!(student, 1);
    let enrolled = text.replace(",48999,,", ",48999,S-48999,");
    book.import_roster(&roster::read(enrolled.as_bytes()).unwrap()).unwrap();
    assert!(book.test_students().unwrap().is_empty() && book.student("S-48999").is_ok());
}

/// The made-up class (`super::book`) and its course's assignment `attention`, due 1 December.
fn attention_class(dir: &Path) -> (CourseFile, Gradebook, Assignment) {
    let course = course(dir);
    let attention = course.assignment(Some("attention")).unwrap();
    (course, super::book(dir), attention)
}

/// [`attention_class`], Eve's due date extended by three days.
fn extended_class(dir: &Path) -> (CourseFile, Gradebook, Assignment) {
    let (course, mut book, attention) = attention_class(dir);
    let eve = book.student("eve").unwrap();
    book.extend(&eve, &attention, None, Some(3), "illness", "lecturer").unwrap();
    (course, book, attention)
}

#[test]
fn an_extended_student_s_late_mark_is_listed_apart_with_the_hand_in_time_to_check() {
    let dir = scratch("late-marks");
    let (_, book, attention) = extended_class(&dir);
    let class = dir.join("download");
    std::fs::create_dir_all(&class).unwrap();
    for name in ["lovelaceada_LATE_101_1_x.rs", "hoppergrace_LATE_102_2_x.rs", "hyperlinkeve_LATE_103_3_x.rs"] {
        std::fs::write(class.join(name), "").unwrap();
    }
    let matched = book.match_hand_ins(&class, Some(&attention)).unwrap();
    assert_eq!(matched.marked_late, ["ada", "grace"]);
    assert_eq!(matched.extended, [("eve".to_string(), "2026-12-04T23:59:00Z".to_string())]);
    // Canvas's mark says nothing of Eve's own due date: she is neither on time nor late until her hand-in
    // time is read.
    let lines = matched.lines().join("\n");
    assert!(
        lines.contains(
            "marked LATE by Canvas: eve, extended to 2026-12-04T23:59:00Z; Canvas marks LATE against its own due date: check SpeedGrader's hand-in time and record it with `cargo anatomy exercises gradebook late --assignment attention eve=TIME` if it is after 2026-12-04T23:59:00Z"
        ),
        "{lines}"
    );
    assert!(lines.contains("gradebook late --assignment attention STUDENT=DAYS …): ada, grace"), "{lines}");
    assert!(!lines.contains("on time"), "{lines}");
    // Without the assignment, the marks are listed as they are, and the command says what would count them.
    let unapplied = book.match_hand_ins(&class, None).unwrap();
    assert_eq!(unapplied.marked_late, ["ada", "eve", "grace"]);
}

#[test]
fn a_late_penalty_keeps_the_policy_s_share_of_a_whole_assignment_and_none_reads_on_time() {
    let dir = scratch("late");
    let (course, mut book, attention) = extended_class(&dir);
    // A download's run: no hand-in time, so nothing is late yet.
    let cells = |who| [(who, "scaled_dot_product", Status::Passed, 5.0), (who, "attention_head", Status::Passed, 5.0)];
    let all: Vec<_> = ["ada", "grace", "eve"].into_iter().flat_map(cells).collect();
    book.record(&run(&book, "attention", &all)).unwrap();
    let given: Vec<_> = ["ada=2", "grace=2026-12-03T10:00:00Z", "eve=2026-12-03T10:00:00Z"]
        .iter()
        .map(|t| {
            let (who, l) = late_entry(t, false).unwrap();
            (book.student(&who).unwrap(), l)
        })
        .collect();
    let said =
        book.set_late(&course, &attention, &given, "Canvas marked it LATE; SpeedGrader's times", "lecturer").unwrap();
    assert_eq!(
        said,
        [
            "ada in attention: Submitted 2 days late: the course keeps 80 % of the points (a 10 % penalty per day, nothing after 5 days).",
            "grace in attention: Submitted 2 days late: the course keeps 80 % of the points (a 10 % penalty per day, nothing after 5 days).",
            "eve in attention: on time by their own due date, all points kept",
        ]
    );
    let totals = |book: &Gradebook| -> Vec<Option<f64>> {
        book.standings(&course, &attention).unwrap().iter().map(|s| s.total()).collect()
    };
    assert_eq!(totals(&book), [Some(8.0), Some(10.0), Some(8.0)], "ada, eve, grace");
    // An extension given later counts for a hand-in time: Grace's is now within her own due date.
    let grace = book.student("grace").unwrap();
    book.extend(&grace, &attention, None, Some(2), "a family matter", "lecturer").unwrap();
    assert_eq!(totals(&book)[2], Some(10.0));
    // An override still stands over its cell; withdrawing the penalty gives the run's points back.
    let ada = book.student("ada").unwrap();
    book.set_override(&ada, "attention_head", Some(2.0), 5.0, "the helper was a classmate's", "lecturer").unwrap();
    assert_eq!(totals(&book)[0], Some(6.0), "4 kept of the first cell, 2 set by hand");
    let history: Vec<String> = book.history(&ada).unwrap().iter().map(|e| e.line()).collect();
    assert!(
        history.iter().any(|l| l.ends_with(
            "late penalty on attention: 2 days late, by lecturer: Canvas marked it LATE; SpeedGrader's times"
        )),
        "{history:#?}"
    );
    let moodle = export(&book, &course, Format::Moodle, Some("attention")).unwrap().text;
    assert!(
        moodle.contains(r#""S-1","Lovelace, Ada",6,"6 of 10 points; 2 days late (set by the instructor); points set by the instructor: attention_head""#),
        "{moodle}"
    );
    // A hand-in time within the student's own due date is on time, never "0 days late".
    assert!(
        moodle.contains(r#"10,"10 of 10 points; on time (set by the instructor: handed in 2026-12-03T10:00:00Z); due date extended to 2026-12-04T23:59:00Z""#),
        "{moodle}"
    );
    let eve = book.standings(&course, &attention).unwrap().remove(1);
    let decided = crate::pages::decided(&course, &attention, &eve).unwrap();
    assert!(decided.contains("Submitted on time: the course keeps all of the points.") && !decided.contains("0 days"));
    book.set_late(&course, &attention, &[(ada.clone(), LateMark::Withdrawn)], "settled", "lecturer").unwrap();
    assert_eq!(totals(&book)[0], Some(7.0));
    assert!(book
        .history(&ada)
        .unwrap()
        .last()
        .unwrap()
        .line()
        .ends_with("late penalty on attention withdrawn by lecturer: settled"));
}

#[test]
fn an_extension_given_after_the_grading_counts_at_once_from_the_hand_in_time_the_run_recorded() {
    let dir = scratch("extended-later");
    let (course, mut book, attention) = attention_class(&dir);
    let ada = book.student("ada").unwrap();
    // Graded from folders with hand-in times: Ada two days late (kept at 80 %), Grace on time.
    let mut graded = run(
        &book,
        "attention",
        &[
            ("ada", "scaled_dot_product", Status::Passed, 4.0),
            ("ada", "attention_head", Status::Passed, 4.0),
            ("grace", "scaled_dot_product", Status::Passed, 5.0),
            ("grace", "attention_head", Status::Passed, 5.0),
        ],
    );
    graded.due = Some("2026-12-01T23:59:00Z".into());
    for c in &mut graded.cells {
        let late = c.student == ada.key;
        c.handed_in = Some(if late { "2026-12-03T10:00:00Z" } else { "2026-12-01T10:00:00Z" }.into());
        c.due = graded.due.clone();
        c.late_days = Some(if late { 2 } else { 0 });
    }
    book.record(&graded).unwrap();
    let standing = |book: &Gradebook| book.standings(&course, &attention).unwrap().remove(0);
    assert_eq!((standing(&book).total(), standing(&book).late_days()), (Some(8.0), Some(2)));
    assert!(book.show(&course, None).unwrap().contains("| ada | 8 | – |"));
    // An illness: three more days, given after the grading. Nobody is regraded, and she is on time.
    book.extend(&ada, &attention, None, Some(3), "illness, note on file", "lecturer").unwrap();
    let now = standing(&book);
    assert_eq!((now.total(), now.late_days()), (Some(10.0), Some(0)));
    assert!(book.show(&course, None).unwrap().contains("| ada | 10 | – |"));
    assert!(book.show(&course, Some(&attention)).unwrap().contains("| ada | 5 | 5 | 10 |"));
    let ours = export(&book, &course, Format::Csv, Some("attention")).unwrap().text;
    assert!(
        ours.contains(
            r#""ada","Lovelace, Ada","101","S-1","ada","Mon",5,5,10,"due date extended to 2026-12-04T23:59:00Z""#
        ),
        "{ours}"
    );
    let moodle = export(&book, &course, Format::Moodle, Some("attention")).unwrap().text;
    assert!(
        moodle.contains(r#""S-1","Lovelace, Ada",10,"10 of 10 points; due date extended to 2026-12-04T23:59:00Z""#),
        "{moodle}"
    );
    let canvas = export(&book, &course, Format::Canvas, Some("attention")).unwrap().text;
    assert!(canvas.contains(r#""Lovelace, Ada","101","S-1","ada","Mon",10"#), "{canvas}");
    // The class report made again holds her to her own due date too.
    let row = now.row(Some("2026-12-01T23:59:00Z")).unwrap();
    let extension = row.extension.unwrap();
    assert_eq!(
        (format_time(extension.due), extension.reason.as_str()),
        ("2026-12-04T23:59:00Z".into(), "illness, note on file")
    );
    // Grace's own due date is the class's: nothing changes for her.
    let grace = book.standings(&course, &attention).unwrap().remove(2);
    assert_eq!(grace.student.label, "grace");
    assert_eq!(
        (grace.total(), grace.late_days(), grace.row(Some("2026-12-01T23:59:00Z")).unwrap().extension),
        (Some(10.0), Some(0), None)
    );
}

#[test]
fn a_late_penalty_that_cannot_be_counted_is_refused_in_one_line_that_names_the_fix() {
    let dir = scratch("late-refused");
    let (course, mut book, attention) = attention_class(&dir);
    let ada = book.student("ada").unwrap();
    // What cannot be counted is refused, each in one line that names the fix.
    for (text, says) in [
        ("grace", "give each student with their days late or hand-in time: grace=2"),
        ("grace=soon", "neither days late nor a hand-in time"),
        ("grace=99999", "at most 3650 days late"),
    ] {
        let error = late_entry(text, false).unwrap_err().to_string();
        assert!(error.contains(says) && !error.contains('\n'), "{error}");
    }
    assert!(late_entry("grace=2", true).unwrap_err().to_string().contains("with --clear, name the students only"));
    let decoder = course.assignment(Some("decoder")).unwrap();
    let at = LateMark::HandedIn(anatomy_intake::times::parse_time("2026-12-03T10:00:00Z").unwrap());
    let error = book.set_late(&course, &decoder, &[(ada.clone(), at)], "x", "y").unwrap_err().to_string();
    assert!(
        error.starts_with("decoder has no due date to count ada's hand-in time from: give the days late instead"),
        "{error}"
    );
    let no_policy = dir.join("plain.toml");
    std::fs::write(&no_policy, "[assignments.attention]\nexercises = [\"scaled_dot_product\"]\n").unwrap();
    let error = book
        .set_late(&crate::export::load_course(&no_policy).unwrap(), &attention, &[(ada, LateMark::Days(1))], "x", "y")
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("the course file has no late policy: add a [late] table"), "{error}");
}

#[test]
fn canvas_s_import_fills_its_own_columns_by_id_and_clears_no_grade_it_holds() {
    let dir = scratch("canvas-import");
    let course = titled_course(&dir);
    let mut book = canvas_book(&dir);
    let both = |who| [(who, "scaled_dot_product", Status::Passed, 5.0), (who, "attention_head", Status::Failed, 0.0)];
    let encoder: Vec<_> = ["ada", "grace", "eve"].into_iter().flat_map(both).collect();
    book.record(&run(&book, "encoder", &encoder)).unwrap();
    let decoder: Vec<_> = ["ada", "grace", "eve", "bri"].map(|w| (w, "cross_attention", Status::Passed, 20.0)).to_vec();
    book.record(&run(&book, "decoder", &decoder)).unwrap();
    let all = export(&book, &course, Format::Canvas, None).unwrap();
    assert_eq!(
        all.warnings,
        [
            "no grade to send, so left out (an empty cell would clear a grade the platform holds): alan",
            "left out, with no grade in encoder (an empty cell would clear a grade the platform holds): bri; export each assignment alone (--assignment NAME) to send theirs",
        ]
    );
    assert!(all.text.starts_with(
        "\"Student\",\"ID\",\"SIS User ID\",\"SIS Login ID\",\"Section\",\"Homework 2: Decoder (48214)\",\"Encoder (48213)\"\n"
    ));
    let canvas = canvas_course("");
    let imported = canvas_import(&canvas, &all.text).unwrap();
    assert_eq!((imported.new_assignments.len(), imported.unknown_students.len(), imported.removed.len()), (0, 0, 0));
    assert_eq!(imported.points_possible, [(48213, "10".to_string()), (48214, "20".to_string())].into());
    let decoder_alone = export(&book, &course, Format::Canvas, Some("decoder")).unwrap();
    assert_eq!(
        decoder_alone.warnings,
        ["no grade to send, so left out (an empty cell would clear a grade the platform holds): alan"]
    );
    let imported = canvas_import(&CanvasCourse { scores: imported.scores, ..canvas }, &decoder_alone.text).unwrap();
    let expected: std::collections::BTreeMap<(u64, u64), String> = [
        ((101, 48213), "5"),
        ((102, 48213), "5"),
        ((103, 48213), "5"),
        ((104, 48213), "9"),
        ((101, 48214), "20"),
        ((102, 48214), "20"),
        ((103, 48214), "20"),
        ((104, 48214), "20"),
        ((105, 48214), "15"),
    ]
    .map(|(k, v)| (k, v.to_string()))
    .into();
    assert_eq!(imported.scores, expected, "every grade on its student, Alan's and Bri's own kept");
    // The importer clears a score under an empty cell, as a file with Alan's row would have done.
    let with_alan = format!("{}\"Turing, Alan\",\"105\",\"S-105\",\"alan\",\"x\",\n", decoder_alone.text);
    assert_eq!(canvas_import(&canvas_course(""), &with_alan).unwrap().removed, [(105, 48214)]);
    // A title renamed in Canvas follows the id; a title alone that two columns share is said.
    let mut renamed = canvas_roster();
    renamed.assignment_columns[1] = "Homework 2: The Decoder (48214)".into();
    book.import_roster(&renamed).unwrap();
    assert_eq!(book.canvas_columns().unwrap(), ["Encoder (48213)", "Homework 2: The Decoder (48214)"]);
    let text = export(&book, &course, Format::Canvas, Some("decoder")).unwrap().text;
    assert!(text.starts_with(
        "\"Student\",\"ID\",\"SIS User ID\",\"SIS Login ID\",\"Section\",\"Homework 2: The Decoder (48214)\"\n"
    ));
    renamed.assignment_columns.push("Encoder (48300)".into());
    book.import_roster(&renamed).unwrap();
    let warned = export(&book, &course, Format::Canvas, Some("encoder")).unwrap().warnings;
    assert!(warned.iter().any(|w| w.starts_with("Canvas's export has 2 columns titled \"Encoder\"")), "{warned:?}");
}

/// The Moodle course our exports go back to, with a grade and feedback entered in Moodle for each of
/// Ada and Bri.
fn moodle_course(item: &str) -> MoodleCourse {
    let user = |id, username: &str, idnumber: &str, email: &str| MoodleUser {
        id,
        username: username.into(),
        idnumber: idnumber.into(),
        email: email.into(),
    };
    MoodleCourse {
        users: vec![
            user(1, "ada", "", "ada@example.org"),
            user(2, "grace", "0", "grace@example.org"),
            user(3, "eve", "S-103", "eve@example.org"),
            user(4, "bri", "S-104", ""),
        ],
        items: vec![(7, item.into())],
        grades: [((1, 7), Some(3.0)), ((4, 7), Some(9.0))].into(),
        feedback: [((4, 7), "handed in on paper".to_string())].into(),
        unlimited_grades: None,
    }
}

#[test]
fn moodle_s_import_maps_the_one_identifier_chosen_lands_every_grade_and_clears_none() {
    let dir = scratch("moodle-import");
    let course = titled_course(&dir);
    let mut book = Gradebook::open_or_create(&dir.join(FILE_NAME)).unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/rosters/moodle.csv");
    book.import_roster(&crate::roster::read_roster(&path).unwrap()).unwrap();
    let graded = ["ada", "grace", "eve"].map(|w| (w, "cross_attention", Status::Passed, 20.0));
    book.record(&run(&book, "decoder", &graded)).unwrap();
    let moodle = |identify| {
        let decoder = course.assignment(Some("decoder")).unwrap();
        book.export(
            &course,
            ExportRequest { format: Format::Moodle, assignment: Some(&decoder), identify, unlimited_grades: false },
        )
    };
    let error = moodle(None).unwrap_err().to_string();
    assert!(error.contains("choose it with --identify idnumber, username or email"), "{error}");
    // By ID number: Ada has none and Grace's "0" is none to Moodle, so both are named and left out.
    let by_number = moodle(Some(MoodleId::IdNumber)).unwrap();
    assert!(by_number.warnings[0].starts_with("left out, with no ID number"), "{:?}", by_number.warnings);
    assert!(by_number.warnings[0].ends_with(": ada, grace"), "{:?}", by_number.warnings);
    let item = "Assignment: Homework 2: Decoder";
    let header = format!("\"ID number\",\"Full name\",\"{item} (Real)\",\"{item} (Feedback)\"\n");
    assert!(by_number.text.starts_with(&header), "{}", by_number.text);
    let imported = moodle_import(&moodle_course(item), &by_number.text).unwrap();
    assert_eq!(imported.identified_by, "ID number", "chosen by Moodle's import itself");
    assert_eq!(imported.grades, [((1, 7), Some(3.0)), ((3, 7), Some(20.0)), ((4, 7), Some(9.0))].into());
    assert_eq!(imported.feedback[&(3, 7)], "20 of 20 points");
    assert_eq!(imported.feedback[&(4, 7)], "handed in on paper", "Bri was never graded here: no row of hers");
    // By e-mail: everyone graded has one.
    let by_mail = moodle(Some(MoodleId::Email)).unwrap();
    assert_eq!(
        by_mail.warnings,
        ["no grade to send, so left out (an empty cell would clear a grade the platform holds): bri"]
    );
    let imported = moodle_import(&moodle_course(item), &by_mail.text).unwrap();
    assert_eq!(imported.identified_by, "Email address");
    let expected = [((1, 7), Some(20.0)), ((2, 7), Some(20.0)), ((3, 7), Some(20.0)), ((4, 7), Some(9.0))];
    assert_eq!(imported.grades, expected.into());
    // The import's own rules, on files we no longer write: a first row without an identifier refuses the
    // file, a later one gives its grades to the student above it, and an empty cell clears a grade.
    let rows = |rows: &str| format!("\"ID number\",\"{item} (Real)\"\n{rows}");
    assert!(moodle_import(&moodle_course(item), &rows(",5\n\"S-103\",6\n")).is_err());
    let later = moodle_import(&moodle_course(item), &rows("\"S-103\",6\n,5\n")).unwrap();
    assert_eq!(later.grades[&(3, 7)], Some(5.0), "the second row's grade went to Eve");
    let cleared = moodle_import(&moodle_course(item), &rows("\"S-104\",\n")).unwrap();
    assert_eq!(cleared.grades[&(4, 7)], None);
}

#[test]
fn moodle_gets_no_grade_above_its_limit_and_no_identifier_the_rule_against_formulas_changed() {
    let dir = scratch("moodle-limits");
    // The project's own course: one assignment, `exercises`, worth more than Moodle's 100.
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../exercises/course.toml");
    let default = crate::export::load_course(&default).unwrap();
    let all = default.assignment(None).unwrap();
    let most = default.most(&all);
    assert!(most > 100.0, "the course is worth {most}: this test needs more than 100");
    let mut book = Gradebook::open_or_create(&dir.join(FILE_NAME)).unwrap();
    let plain = "name,id,login,sis_id\n\"Lovelace, Ada\",1,ada,S-1\n\"Hopper, Grace\",2,grace,-42\n\"Eve\",3,eve,+7\n";
    book.import_roster(&roster::read(plain.as_bytes()).unwrap()).unwrap();
    let full: Vec<_> = ["ada", "grace", "eve"]
        .into_iter()
        .flat_map(|who| {
            let default = &default;
            all.exercises.iter().map(move |e| (who, e.name, Status::Passed, default.max(e.name)))
        })
        .collect();
    book.record(&run(&book, "exercises", &full)).unwrap();
    let moodle = |unlimited_grades| {
        let request = ExportRequest {
            format: Format::Moodle,
            assignment: Some(&all),
            identify: Some(MoodleId::IdNumber),
            unlimited_grades,
        };
        book.export(&default, request)
    };
    // Moodle refuses the whole file for a grade above 100, unless the site allows more.
    let error = moodle(false).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("Moodle's grade import refuses the whole file when a grade is above 100, and exercises (worth {most}) can earn more: give --unlimited-grades if your site allows it (Site administration > Grades > General settings > Unlimited grades)"))
            && !error.contains('\n'),
        "{error}"
    );
    let exported = moodle(true).unwrap();
    // An ID number the rule against formulas would write with a ' before it is no user's to Moodle: those
    // students are left out, and named.
    assert_eq!(
        exported.warnings,
        ["left out, since their ID number starts a piece with =, +, - or @, which the rule against formulas writes with a ' before it (Moodle's import would find no user with that, and refuse the whole file): eve, grace"]
    );
    let users = [(1, "ada", "S-1"), (2, "grace", "-42"), (3, "eve", "+7")].map(|(id, username, idnumber)| MoodleUser {
        id,
        username: username.into(),
        idnumber: idnumber.into(),
        email: String::new(),
    });
    let site = |unlimited_grades| MoodleCourse {
        users: users.to_vec(),
        items: vec![(7, "exercises".into())],
        unlimited_grades,
        ..Default::default()
    };
    let error = moodle_import(&site(None), &exported.text).unwrap_err();
    assert!(error.starts_with("gradevaluetoobig"), "{error}");
    let imported = moodle_import(&site(Some(10_000.0)), &exported.text).unwrap();
    assert_eq!(imported.grades, [((1, 7), Some(most))].into());
    assert!(moodle_import(&site(None), "\"ID number\",\"exercises (Real)\"\n\"'-42\",5\n").is_err(), "no such user");
}

#[test]
fn a_moodle_grade_item_the_rule_against_formulas_would_change_is_refused_with_the_fix() {
    let dir = scratch("moodle-header");
    let mut book = Gradebook::open_or_create(&dir.join(FILE_NAME)).unwrap();
    book.import_roster(&roster::read(b"name,id,sis_id\nAda,1,S-1\n").unwrap()).unwrap();
    let quiz = dir.join("quiz.toml");
    std::fs::write(&quiz, "[assignments.quiz]\nexercises = [\"layer_norm\"]\nmoodle = \"Quiz, -part\"\n").unwrap();
    let quiz = crate::export::load_course(&quiz).unwrap();
    let error = book
        .export(
            &quiz,
            ExportRequest {
                format: Format::Moodle,
                assignment: None,
                identify: Some(MoodleId::IdNumber),
                unlimited_grades: false,
            },
        )
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("the Moodle grade item \"Quiz, -part\" of quiz has a piece starting with =, +, - or @")
            && error.ends_with("(moodle = \"…\" under [assignments.quiz] in the course file)")
            && !error.contains('\n'),
        "{error}"
    );
    let guarded = "\"ID number\",\"Quiz, '-part (Real)\"\n\"S-1\",5\n";
    let user = MoodleUser { id: 1, username: "ada".into(), idnumber: "S-1".into(), email: String::new() };
    let unmapped = MoodleCourse { users: vec![user], items: vec![(7, "Quiz, -part".into())], ..Default::default() };
    assert!(moodle_import(&unmapped, guarded).unwrap().grades.is_empty(), "no column mapped to the item");
}

#[test]
fn a_gradebook_is_read_without_a_write_on_a_read_only_share_and_an_older_one_read_migrated() {
    let dir = scratch("read-only");
    let course = titled_course(&dir);
    let path = {
        let mut book = canvas_book(&dir);
        book.record(&run(&book, "decoder", &[("ada", "cross_attention", Status::Passed, 20.0)])).unwrap();
        book.path().to_path_buf()
    };
    let bytes = std::fs::read(&path).unwrap();
    // A share SQLite can write nothing to: its -wal and -shm files can be neither made nor opened.
    let beside = |end: &str| dir.join(format!("{FILE_NAME}-{end}"));
    for end in ["wal", "shm"] {
        assert!(!beside(end).exists(), "the last writer removed its {end} file");
        std::fs::create_dir(beside(end)).unwrap();
    }
    let book = Gradebook::read(&path).unwrap();
    let shown = book.show(&course, None).unwrap();
    assert!(shown.contains("| student | decoder | encoder |") && shown.contains("| ada | 20 | – |"), "{shown}");
    let exported = export(&book, &course, Format::Canvas, Some("decoder")).unwrap();
    assert!(exported.text.contains("\"101\",\"S-101\",\"ada\",\"Transformers 101 - Monday\",20"));
    drop(book);
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "not a byte changed");
    let error = Gradebook::open(&path).err().unwrap().to_string();
    assert!(error.starts_with("cannot write the gradebook") && !error.contains('\n'), "{error}");
    for end in ["wal", "shm"] {
        std::fs::remove_dir(beside(end)).unwrap();
    }
    // A gradebook of schema 3 is read as it would be migrated, and left at 3 until it is next written.
    let old = dir.join("old.sqlite");
    {
        let conn = rusqlite::Connection::open(&old).unwrap();
        for step in &schema::MIGRATIONS[..3] {
            conn.execute_batch(step).unwrap();
        }
        conn.pragma_update(None, "application_id", schema::APPLICATION_ID).unwrap();
        conn.pragma_update(None, "user_version", 3).unwrap();
        conn.execute(
            "INSERT INTO students (name, lms_id, sis_id, login, section, label, roster) VALUES ('Ada', '101', 'S-1', 'ada', '', 'ada', 'canvas')",
            [],
        )
        .unwrap();
    }
    let version = |p: &Path| -> i32 {
        rusqlite::Connection::open(p).unwrap().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap()
    };
    let read = Gradebook::read(&old).unwrap();
    assert_eq!((read.student("ada").unwrap().email.as_str(), read.late_penalties("decoder").unwrap().len()), ("", 0));
    drop(read);
    assert_eq!(version(&old), 3);
    let written = Gradebook::open(&old).unwrap();
    assert_eq!(version(&old), schema::newest());
    assert_eq!(written.student("S-1").unwrap().label, "ada");
}

#[test]
fn the_gradebook_is_kept_beside_a_course_file_of_ones_own_else_in_the_data_folder_never_in_the_handout() {
    let dir = scratch("location");
    let project = dir.join("project/exercises/course.toml");
    std::fs::create_dir_all(project.parent().unwrap()).unwrap();
    std::fs::write(&project, "").unwrap();
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| std::ffi::OsString::from(v))
    };
    let home = env(&[("HOME", "/home/lecturer")]);
    let own = dir.join("course/course.toml");
    let beside = Location::found(Some(&own), &project, &home);
    assert_eq!((beside.path, beside.why), (dir.join("course").join(FILE_NAME), "beside the course file"));
    for course in [None, Some(project.as_path())] {
        let data = Location::found(course, &project, &home);
        assert_eq!(data.path, Path::new("/home/lecturer/.local/share/transformer-anatomy/gradebook.sqlite"));
        assert!(data.why.starts_with("your data folder, outside the copy handed out to students"));
    }
    let xdg = Location::found(None, &project, &env(&[("HOME", "/h"), ("XDG_DATA_HOME", "/data")]));
    assert_eq!(xdg.path, Path::new("/data/transformer-anatomy/gradebook.sqlite"));
    let named = Location::found(None, &project, &env(&[("HOME", "/h"), ("ANATOMY_GRADEBOOK", "/term/book.sqlite")]));
    assert_eq!((named.path.to_str(), named.why), (Some("/term/book.sqlite"), "named by ANATOMY_GRADEBOOK"));
    // None there yet: said, with where it looked and why.
    let data = dir.join("data");
    let at = Location { path: data.join("transformer-anatomy").join(FILE_NAME), why: "your data folder", before: None };
    let error = at.read().err().unwrap().to_string();
    assert!(
        error.starts_with(&format!("there is no gradebook at {} (your data folder)", at.path.display())),
        "{error}"
    );
    // A gradebook still inside the handed-out tree, where they were kept before, is to be moved.
    drop(Gradebook::open_or_create(&project.parent().unwrap().join(FILE_NAME)).unwrap());
    let moved = Location::found(None, &project, &env(&[("XDG_DATA_HOME", "/nonexistent-data")]));
    let error = moved.open().err().unwrap().to_string();
    assert!(error.contains("but yours is still at") && error.contains("move it (mv "), "{error}");
    assert!(moved.create().is_err(), "not a second one beside it");
    // Importing a roster makes the folder and the gradebook, and says where and why.
    let said = at.import(&canvas_roster()).unwrap();
    assert!(
        said.starts_with(&format!("a new gradebook: the gradebook {} (your data folder)\n", at.path.display())),
        "{said}"
    );
    assert!(!at.import(&canvas_roster()).unwrap().starts_with("a new gradebook"));
}
