//! An instructor's term through the binary, step by step as exercises/README.md's "A term in the
//! gradebook" gives it, on Canvas's gradebook export as Canvas writes it (`tests/rosters/canvas.csv`: a BOM,
//! CRLF, the `Points Possible` and `Manual Posting` rows, Canvas's test student, names with commas, quotes,
//! accents and a leading `=`, a student with no SIS id, two sections, assignments titled `Encoder` and
//! `Homework 2: Decoder`): import the roster, see who is matched, give extensions, grade the encoder from
//! student folders (one late, one on their extension, one folder renamed, two with nothing), regrade one
//! student after a fix, override a cell, grade the decoder from a Canvas bulk download (two marked LATE, one
//! of them extended, a resubmission regraded, a file nobody owns, the test student's file), give the late
//! one their late penalty, read a history, export for Canvas and Moodle and read each file back by the rules
//! of the platform's own importer (`crates/gradebook/tests/platforms/importers.rs`) into a course that holds
//! grades of its own, make the reports again from the gradebook alone, read a gradebook no one may write,
//! and export a Moodle course whose first students lack the identifier. Each command run here is one the
//! README shows.
//!
//! It needs `solutions/` (the students hand in the reference solutions, some a named mistake).
#![cfg(anatomy_solutions)]

#[path = "../../../tests/common/class.rs"]
mod class;
#[path = "../../gradebook/tests/platforms/canvas_course.rs"]
mod canvas_course;
#[path = "../../gradebook/tests/platforms/importers.rs"]
mod importers;
#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;

use std::collections::BTreeMap;
use std::path::Path;

use anatomy_course::project_root;
use canvas_course::canvas_course;
use class::{anatomy, full_marks};
use importers::*;
use test_dir::TestDir;

const COURSE: &str = "[late]\npenalty_per_day = 0.1\nmax_days = 5\n\n\
    [assignments.encoder]\nexercises = [\"scaled_dot_product\", \"attention_head\"]\ndue = \"2026-12-01T23:59:00Z\"\n\
    canvas = \"Encoder\"\n\n\
    [assignments.decoder]\nexercises = [\"cross_attention\"]\ndue = \"2026-12-08T23:59:00Z\"\n\
    canvas = \"Homework 2: Decoder (48214)\"\nmoodle = \"Assignment: Homework 2: Decoder\"\n";

const DECODER: &str = "Assignment: Homework 2: Decoder";

fn solution(name: &str) -> std::path::PathBuf {
    project_root().join("solutions").join(format!("{name}.rs"))
}

fn mistake(exercise: &str, name: &str) -> std::path::PathBuf {
    project_root().join("tests/exercise-mistakes").join(exercise).join(format!("{name}.rs"))
}

fn hand_in(folder: &Path, handed_in: &str) {
    std::fs::create_dir_all(folder).unwrap();
    for name in ["scaled_dot_product", "attention_head"] {
        std::fs::copy(solution(name), folder.join(format!("{name}.rs"))).unwrap();
    }
    std::fs::write(folder.join("timestamp.txt"), handed_in).unwrap();
}

/// A CSV's rows by the value of one column.
fn rows_by(text: &str, column: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let at = header.iter().position(|h| h == column).unwrap();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[at].to_string(), header.iter().cloned().zip(r.iter().map(String::from)).collect())
        })
        .collect()
}

/// A Moodle course's users (id, username, ID number, e-mail) with one grade item, and a grade already
/// held by the user `held`.
fn moodle_course(users: &[(u64, &str, &str, &str)], item: &str, held: (u64, f64)) -> MoodleCourse {
    MoodleCourse {
        users: users
            .iter()
            .map(|&(id, username, idnumber, email)| MoodleUser {
                id,
                username: username.into(),
                idnumber: idnumber.into(),
                email: email.into(),
            })
            .collect(),
        items: vec![(7, item.into())],
        grades: [((held.0, 7), Some(held.1))].into(),
        feedback: BTreeMap::new(),
        unlimited_grades: None,
    }
}

#[test]
fn an_instructors_term_from_roster_to_the_platforms_import() {
    let dir = TestDir::new("gradebook");
    let course = dir.join("course/course.toml");
    std::fs::create_dir_all(course.parent().unwrap()).unwrap();
    std::fs::write(&course, COURSE).unwrap();
    let course = course.to_str().unwrap().to_string();
    let run = |args: &[&str]| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--course", &course]);
        anatomy(&all)
    };
    let gradebook = |args: &[&str]| run(&[&["exercises", "gradebook"], args].concat());
    let file = |name: &str| dir.join(name).to_str().unwrap().to_string();

    // The roster, from Canvas's gradebook export: its test student is said once and counted nowhere.
    let roster = project_root().join("tests/rosters/canvas.csv");
    let (code, out, err) = gradebook(&["roster", roster.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("a new gradebook: the gradebook ") && out.contains("(beside the course file)"), "{out}");
    assert!(out.contains("5 added, 0 updated, 0 unchanged; Canvas's test student (Student, Test, id 48999)"), "{out}");

    // The encoder, from folders: Ada on time, Grace two days late with a named mistake, Eve late but
    // extended, Alan and Bri with nothing, and a folder renamed to a name the roster does not know.
    let class = dir.join("class");
    hand_in(&class.join("ada"), "2026-12-01 10:00:00 UTC");
    hand_in(&class.join("grace"), "2026-12-03 10:00:00 UTC");
    std::fs::copy(mistake("attention_head", "keys_from_query_map"), class.join("grace/attention_head.rs")).unwrap();
    hand_in(&class.join("eve"), "2026-12-03 10:00:00 UTC");
    hand_in(&class.join("my-final-version"), "2026-12-01 10:00:00 UTC");
    let class = class.to_str().unwrap().to_string();
    // Graded into a gradebook that is not there: refused, saying where it looked, and nothing graded.
    let elsewhere = dir.join("no-gradebook/course.toml");
    std::fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
    std::fs::write(&elsewhere, COURSE).unwrap();
    let elsewhere = elsewhere.to_str().unwrap();
    for only in [&["--assignment", "encoder"][..], &["--student", "ada"]] {
        let (code, out, err) = anatomy(&[&["exercises", "grade", &class, "--course", elsewhere][..], only].concat());
        assert_eq!((code, out.as_str()), (Some(1), ""), "{err}");
        assert!(err.starts_with("error: there is no gradebook at ") && err.lines().count() == 1, "{err}");
        assert!(err.contains("no-gradebook/gradebook.sqlite (beside the course file): import a roster first"), "{err}");
    }
    let (code, out, _) = gradebook(&["match", &class]);
    assert_eq!(code, Some(1), "a hand-in no one claims is worth an exit code: {out}");
    assert!(out.contains("3 hand-ins matched to the roster"), "{out}");
    assert!(out.contains("unmatched: my-final-version: no student of the roster has this login or id"), "{out}");
    assert!(out.contains("no hand-in: alan (Turing, Alan, id 105)"), "{out}");
    assert!(!out.contains("48999"), "the test student has no hand-in to miss: {out}");

    for assignment in ["encoder", "decoder"] {
        let (code, out, err) = gradebook(&[
            "extend",
            "eve",
            "--assignment",
            assignment,
            "--days",
            "3",
            "--reason",
            "illness, note on file",
            "--by",
            "lecturer",
        ]);
        assert_eq!(code, Some(0), "{err}");
        assert!(out.starts_with("eve is due 2026-12-"), "{out}");
    }

    let (code, out, err) = run(&["exercises", "grade", &class, "--assignment", "encoder"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("recorded as run 1 of encoder in"), "{err}");
    assert!(out.contains("| grace | passed | failed | 1/2 | 4/10 |"), "late and one wrong: {out}");
    assert!(out.contains("| eve | passed | passed | 2/2 | 10/10 |"), "the extension counts: {out}");
    assert!(!out.contains("my-final-version"), "an unmatched folder is listed, not graded: {out}");

    // Grace fixes her file: only she is graded again.
    std::fs::copy(solution("attention_head"), Path::new(&class).join("grace/attention_head.rs")).unwrap();
    let (code, out, err) = run(&["exercises", "grade", &class, "--assignment", "encoder", "--student", "grace"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("recorded as run 2 of encoder") && out.contains("| grace | passed | passed | 2/2 | 8/10 |"),
        "{out}{err}"
    );
    assert!(!out.contains("| ada |"), "{out}");

    let (code, out, err) = gradebook(&[
        "override",
        "ada",
        "attention_head",
        "--points",
        "2",
        "--comment",
        "the helper was a classmate's",
        "--by",
        "lecturer",
    ]);
    assert_eq!((code, out.trim()), (Some(0), "attention_head of ada: 2 points, set by hand"), "{err}");

    // The decoder, from a Canvas bulk download: Grace and Eve marked LATE (Eve within her extension), a
    // file nobody owns, and one of Canvas's test student, who is set aside.
    let download = dir.join("download");
    std::fs::create_dir_all(&download).unwrap();
    for (name, from) in [
        ("lovelaceada_101_9001_cross_attention.rs", solution("cross_attention")),
        ("hoppergrace_LATE_102_9002_cross_attention.rs", mistake("cross_attention", "scaled_by_d")),
        ("hyperlinkeve_LATE_103_9003_cross_attention.rs", solution("cross_attention")),
        ("núñezbrígida_104_9004_cross_attention.rs", solution("cross_attention")),
        ("studenttest_48999_9005_cross_attention.rs", solution("cross_attention")),
        ("someoneelse_999_9006_cross_attention.rs", solution("cross_attention")),
    ] {
        std::fs::copy(from, download.join(name)).unwrap();
    }
    let download = download.to_str().unwrap().to_string();
    let (code, out, _) = gradebook(&["match", &download, "--assignment", "decoder"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("4 hand-ins matched to the roster (a Canvas download"), "{out}");
    assert!(out.contains("set aside, not graded: studenttest_48999_9005_cross_attention.rs (Canvas's test student)"));
    assert!(
        out.contains("marked LATE by Canvas: eve, extended to 2026-12-11T23:59:00Z; Canvas marks LATE against its own due date: check SpeedGrader's hand-in time and record it with `cargo anatomy exercises gradebook late --assignment decoder eve=TIME` if it is after 2026-12-11T23:59:00Z"),
        "{out}"
    );
    assert!(out.contains("gradebook late --assignment decoder STUDENT=DAYS …): grace\n"), "{out}");
    let (code, out, err) = run(&["exercises", "grade", &download, "--assignment", "decoder"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("unmatched: someoneelse_999_9006_cross_attention.rs: Canvas id 999 is not in the roster"));
    assert!(out.contains("| ada | passed | 1/1 | 20/20 |") && out.contains("| grace | failed | 0/1 | 0/20 |"), "{out}");
    assert!(out.contains("| eve | passed | 1/1 | 20/20 |") && out.contains("| bri | passed | 1/1 | 20/20 |"), "{out}");
    assert!(!out.contains("48999"), "{out}");
    // Grace hands in again (Canvas numbers the file): regraded from her last file alone.
    let resubmitted = Path::new(&download).join("hoppergrace_LATE_102_9007_cross_attention-1.rs");
    std::fs::copy(solution("cross_attention"), resubmitted).unwrap();
    let (code, out, err) = run(&["exercises", "grade", &download, "--assignment", "decoder", "--student", "grace"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("| grace | passed | 1/1 | 20/20 |") && !out.contains("| ada |"), "{out}");
    // Her LATE mark, decided in one command for the whole assignment.
    let (code, out, err) = gradebook(&[
        "late",
        "grace=2",
        "--assignment",
        "decoder",
        "--reason",
        "Canvas marked it LATE",
        "--by",
        "lecturer",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("grace in decoder: Submitted 2 days late: the course keeps 80 % of the points"), "{out}");

    let (code, out, _) = gradebook(&["show"]);
    assert_eq!(code, Some(0));
    for row in ["| ada | 20 | 7 |", "| alan | – | – |", "| bri | 20 | – |", "| eve | 20 | 10 |", "| grace | 16 | 8 |"]
    {
        assert!(out.contains(row), "{row} in {out}");
    }
    let (code, out, _) = gradebook(&["history", "grace"]);
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "grace (Hopper, Grace; id 102, section Transformers 101 - Monday):");
    assert!(
        lines[1].contains("run 1 of encoder")
            && lines[1].contains("attention_head failed (keys_from_query_map) 0/5, 2 days late"),
        "{out}"
    );
    assert!(lines[2].contains("run 2 of encoder") && lines[2].contains("attention_head passed 4/5, 2 days late"));
    assert!(lines
        .last()
        .unwrap()
        .ends_with("late penalty on decoder: 2 days late, by lecturer: Canvas marked it LATE"));

    // Canvas: every grade on its own ID, in Canvas's own columns, none cleared of what Canvas holds.
    let (code, _, err) = gradebook(&["export", "--format", "canvas", "--out", &file("canvas.csv")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains(
        "warning: no grade to send, so left out (an empty cell would clear a grade the platform holds): alan"
    ));
    assert!(err.contains(
        "warning: left out, with no grade in encoder (an empty cell would clear a grade the platform holds): bri"
    ));
    let text = std::fs::read_to_string(dir.join("canvas.csv")).unwrap();
    let rows = rows_by(&text, "ID");
    assert!(text.starts_with(
        "\"Student\",\"ID\",\"SIS User ID\",\"SIS Login ID\",\"Section\",\"Homework 2: Decoder (48214)\",\"Encoder (48213)\"\n"
    ));
    assert_eq!(rows[""]["Student"], "    Points Possible");
    assert!(rows["103"]["Student"].starts_with("'="), "a formula in a name is quoted");
    let imported = canvas_import(&canvas_course("5f1e0c2a9b7d4e3f8a6c1b0d2e4f6a8c9b7d5e3f"), &text).unwrap();
    assert_eq!((imported.new_assignments.len(), imported.unknown_students.len()), (0, 0), "{imported:?}");
    assert_eq!(imported.points_possible, [(48213, "10".to_string()), (48214, "20".to_string())].into());
    let (code, _, err) =
        gradebook(&["export", "--format", "canvas", "--assignment", "decoder", "--out", &file("canvas-decoder.csv")]);
    assert_eq!(code, Some(0), "{err}");
    let decoder = std::fs::read_to_string(dir.join("canvas-decoder.csv")).unwrap();
    let imported = canvas_import(
        &CanvasCourse { scores: imported.scores, ..canvas_course("5f1e0c2a9b7d4e3f8a6c1b0d2e4f6a8c9b7d5e3f") },
        &decoder,
    )
    .unwrap();
    let expected: BTreeMap<(u64, u64), String> = [
        ((101, 48213), "7"),
        ((102, 48213), "8"),
        ((103, 48213), "10"),
        ((104, 48213), "9"),
        ((101, 48214), "20"),
        ((102, 48214), "16"),
        ((103, 48214), "20"),
        ((104, 48214), "20"),
        ((105, 48214), "15"),
    ]
    .map(|(k, v)| (k, v.to_string()))
    .into();
    assert_eq!(
        (imported.scores, imported.removed),
        (expected, vec![]),
        "Grace late, Eve on time, Alan's and Bri's own kept"
    );

    // Moodle: one identifier, chosen; the headers its import maps by itself; no empty grade.
    let (code, _, err) = gradebook(&["export", "--format", "moodle", "--out", &file("moodle.csv")]);
    assert_eq!(code, Some(1));
    assert!(err.contains("choose it with --identify idnumber, username or email") && err.lines().count() == 1, "{err}");
    let (code, _, err) = gradebook(&[
        "export",
        "--format",
        "moodle",
        "--assignment",
        "decoder",
        "--identify",
        "idnumber",
        "--out",
        &file("moodle.csv"),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("warning: left out, with no ID number (Moodle's import refuses"), "{err}");
    assert!(err.contains("the student above it): bri\n"), "{err}");
    let text = std::fs::read_to_string(dir.join("moodle.csv")).unwrap();
    let users = [
        (1, "ada", "S-101", ""),
        (2, "grace", "S-102", ""),
        (3, "eve", "S-103", ""),
        (4, "bri", "", ""),
        (5, "alan", "S-105", ""),
    ];
    let imported = moodle_import(&moodle_course(&users, DECODER, (5, 12.0)), &text).unwrap();
    assert_eq!(imported.identified_by, "ID number");
    assert_eq!(
        imported.grades,
        [((1, 7), Some(20.0)), ((2, 7), Some(16.0)), ((3, 7), Some(20.0)), ((5, 7), Some(12.0))].into()
    );
    assert_eq!(imported.feedback[&(2, 7)], "16 of 20 points; 2 days late (set by the instructor)");
    assert_eq!(imported.feedback[&(3, 7)], "20 of 20 points; due date extended to 2026-12-11T23:59:00Z");

    // The reports, from the gradebook alone: the class folders are gone.
    std::fs::rename(&class, dir.join("class-moved")).unwrap();
    std::fs::remove_dir_all(&download).unwrap();
    let report = dir.join("report");
    let (code, _, err) =
        gradebook(&["report", "--assignment", "encoder", "--out", report.to_str().unwrap(), "--similarity"]);
    assert_eq!(code, Some(0), "{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["students"], 3);
    assert_eq!(summary["late"]["extended"][0]["student"], "eve");
    assert_eq!(summary["late"]["late"][0]["student"], "grace");
    // As the runs recorded them (overrides are the instructor's, shown in the exports): Ada 10, Grace's
    // regrade 10 kept at 80 % for two days late, Eve 10 on her own due date.
    assert_eq!(summary["late"]["extended"][0]["reason"], "illness, note on file");
    assert_eq!(summary["points"]["mean"].as_f64().map(|m| (m * 100.0).round()), Some(933.0), "{summary}");
    let similar = std::fs::read_to_string(report.join("similarity.html")).unwrap();
    assert!(similar.contains("<title>Similarity report: encoder (from the gradebook)</title>"), "{similar}");
    let (code, _, err) = gradebook(&["report", "--assignment", "decoder", "--out", &file("report-decoder")]);
    assert_eq!(code, Some(0), "{err}");
    let feedback = std::fs::read_to_string(dir.join("report-decoder/feedback/grace.md")).unwrap();
    assert!(
        feedback.contains("## Decided by the instructor\n\nSubmitted 2 days late: the course keeps 80 %"),
        "{feedback}"
    );
    assert!(feedback.ends_with("Your points for decoder: 16 of 20.\n"), "{feedback}");

    // A copy on a share no one may write (SQLite can make neither its -wal nor its -shm file): read, never
    // changed; a change is refused in one line.
    let book = Path::new(&course).parent().unwrap().join("gradebook.sqlite");
    let beside = |end: &str| std::path::PathBuf::from(format!("{}-{end}", book.display()));
    for end in ["wal", "shm"] {
        let _ = std::fs::remove_file(beside(end)); // left by the readers above; no writer is open
        std::fs::create_dir(beside(end)).unwrap();
    }
    let bytes = std::fs::read(&book).unwrap();
    let (code, out, err) = gradebook(&["show", "--assignment", "decoder"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("| grace | 16 | 16 |"), "{out}");
    let (code, _, err) = gradebook(&["export", "--format", "csv", "--out", &file("ours.csv")]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = gradebook(&["extend", "ada", "--assignment", "decoder", "--days", "1", "--reason", "x"]);
    assert_eq!(code, Some(1));
    assert!(err.starts_with("error: cannot write the gradebook") && err.lines().count() == 1, "{err}");
    assert_eq!(std::fs::read(&book).unwrap(), bytes);
    for end in ["wal", "shm"] {
        std::fs::remove_dir(beside(end)).unwrap();
    }

    // Canvas's export of ours, imported again as a roster: the same students, none added.
    let (code, out, err) = gradebook(&["roster", &file("canvas-decoder.csv")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(": 0 added,") && out.contains("kept, though the roster no longer lists them: alan"), "{out}");

    // An extension given after the grading counts at once: Grace handed the encoder in two days after its
    // due date; two more days of her own make her on time, with no regrading.
    let (code, out, err) = gradebook(&[
        "extend",
        "grace",
        "--assignment",
        "encoder",
        "--days",
        "2",
        "--reason",
        "a family matter",
        "--by",
        "lecturer",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("grace is due 2026-12-03T23:59:00Z for encoder, counted at once"), "{out}");
    let (code, out, _) = gradebook(&["show"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("| grace | 16 | 10 |"), "{out}");
    let (code, _, err) =
        gradebook(&["export", "--format", "csv", "--assignment", "encoder", "--out", &file("on-time.csv")]);
    assert_eq!(code, Some(0), "{err}");
    let grace = &rows_by(&std::fs::read_to_string(dir.join("on-time.csv")).unwrap(), "student")["grace"];
    assert_eq!(
        (grace["encoder: total"].as_str(), grace["encoder: notes"].as_str()),
        ("10", "due date extended to 2026-12-03T23:59:00Z")
    );

    // A Moodle course whose first students lack the identifier: Ada has no ID number and Grace's is "0",
    // which Moodle's import reads as none. Graded once (one exercise, the same file for all three).
    let moodle_course_file = dir.join("moodle-course/course.toml");
    std::fs::create_dir_all(moodle_course_file.parent().unwrap()).unwrap();
    std::fs::write(
        &moodle_course_file,
        "[assignments.encoder]\nexercises = [\"scaled_dot_product\", \"attention_head\"]\n",
    )
    .unwrap();
    let moodle_course_file = moodle_course_file.to_str().unwrap();
    let on_moodle = |args: &[&str]| anatomy(&[args, &["--course", moodle_course_file]].concat());
    let roster = project_root().join("tests/rosters/moodle.csv");
    let (code, _, err) = on_moodle(&["exercises", "gradebook", "roster", roster.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let moved = file("class-moved");
    let (code, _, err) =
        on_moodle(&["exercises", "grade", &moved, "--assignment", "encoder", "--only", "scaled_dot_product"]);
    assert_eq!(code, Some(0), "{err}");
    let users = [
        (1, "ada", "", "ada@example.org"),
        (2, "grace", "0", "grace@example.org"),
        (3, "eve", "S-103", "eve@example.org"),
    ];
    for (identify, left_out, grades) in [
        ("idnumber", Some("ID number (Moodle's import refuses a file whose first row has none, and gives a later row without one to the student above it): ada, grace"), vec![((1, 7), Some(3.0)), ((3, 7), Some(5.0))]),
        ("email", None, vec![((1, 7), Some(5.0)), ((2, 7), Some(5.0)), ((3, 7), Some(5.0))]),
    ] {
        let out = file(&format!("moodle-{identify}.csv"));
        let (code, _, err) = on_moodle(&[
            "exercises", "gradebook", "export", "--format", "moodle", "--identify", identify, "--out", &out,
        ]);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(left_out.is_some_and(|l| err.contains(l)), left_out.is_some(), "{err}");
        let imported = moodle_import(&moodle_course(&users, "encoder", (1, 3.0)), &std::fs::read_to_string(&out).unwrap());
        assert_eq!(imported.unwrap().grades, grades.into_iter().collect(), "{identify}");
    }

    // The project's own course is one assignment worth more than 100: Moodle refuses a grade above 100 unless the
    // site has Unlimited grades on, so its export is refused unless the instructor says the site has.
    let whole = dir.join("whole-course/course.toml");
    std::fs::create_dir_all(whole.parent().unwrap()).unwrap();
    std::fs::copy(project_root().join("exercises/course.toml"), &whole).unwrap();
    let whole = whole.to_str().unwrap();
    let on_whole = |args: &[&str]| anatomy(&[args, &["--course", whole]].concat());
    let (code, _, err) = on_whole(&["exercises", "gradebook", "roster", roster.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let out = file("whole.csv");
    let moodle = ["exercises", "gradebook", "export", "--format", "moodle", "--identify", "email", "--out", &out];
    let (code, _, err) = on_whole(&moodle);
    assert_eq!(code, Some(1));
    assert!(
        err.contains(&format!("exercises (worth {}) can earn more: give --unlimited-grades", full_marks()))
            && err.lines().count() == 1,
        "{err}"
    );
    let (code, _, err) = on_whole(&[&moodle[..], &["--unlimited-grades"]].concat());
    assert_eq!(code, Some(1));
    assert!(err.contains("nobody has a grade to send in exercises: grade the class first"), "past the limit: {err}");

    // Without --course, the gradebook is in the instructor's data folder, never in the handed-out tree.
    let legacy = project_root().join("exercises/gradebook.sqlite");
    let data = dir.join("data");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_anatomy"))
        .args(["exercises", "gradebook", "show"])
        .env("XDG_DATA_HOME", &data)
        .env_remove("ANATOMY_GRADEBOOK")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    let place = data.join("transformer-anatomy/gradebook.sqlite");
    let said = match legacy.exists() {
        true => format!("the gradebook is kept in {} (your data folder", place.display()),
        false => format!("there is no gradebook at {} (your data folder, outside the copy handed out", place.display()),
    };
    assert_eq!(output.status.code(), Some(1));
    assert!(err.contains(&said), "{err}");

    // Every command above is one exercises/README.md gives.
    let readme = std::fs::read_to_string(project_root().join("exercises/README.md")).unwrap();
    for command in [
        "cargo anatomy exercises gradebook roster",
        "cargo anatomy exercises gradebook match",
        "cargo anatomy exercises gradebook extend",
        "--assignment encoder",
        "--student",
        "cargo anatomy exercises gradebook override",
        "cargo anatomy exercises gradebook late",
        "cargo anatomy exercises gradebook history",
        "cargo anatomy exercises gradebook export --format canvas",
        "cargo anatomy exercises gradebook export --format moodle",
        "--identify",
        "cargo anatomy exercises gradebook report",
        "cargo anatomy exercises gradebook show",
    ] {
        assert!(readme.contains(command), "exercises/README.md does not give `{command}`");
    }
}
