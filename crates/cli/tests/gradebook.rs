//! An instructor's term through the binary, step by step as exercises/README.md's "A term in the
//! gradebook" gives it: import Canvas's roster, see who is matched, give one student an extension, grade an
//! assignment (one student late, one on the extension, one folder renamed, one student with nothing), regrade
//! one student after a fix, override one cell with a comment, read a history, export for Canvas and Moodle
//! (every row back on the right student with the right id), make the report and the similarity page again
//! from the gradebook alone, and grade a second assignment from a Canvas bulk download. Each command run
//! here is one the README shows.
//!
//! It needs `solutions/` (the students hand in the reference solutions, one a named mistake).
#![cfg(anatomy_solutions)]

#[path = "../../../tests/common/class.rs"]
mod class;
#[path = "../../../tests/common/scratch.rs"]
mod scratch;

use std::collections::BTreeMap;
use std::path::Path;

use anatomy_grade::grading::project_root;
use class::anatomy;
use scratch::Scratch;

const COURSE: &str = "[late]\npenalty_per_day = 0.1\nmax_days = 5\n\n\
    [assignments.attention]\nexercises = [\"scaled_dot_product\", \"attention_head\"]\ndue = \"2026-12-01T23:59:00Z\"\n\n\
    [assignments.decoder]\nexercises = [\"cross_attention\"]\n";

fn solution(name: &str) -> std::path::PathBuf {
    project_root().join("solutions").join(format!("{name}.rs"))
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

#[test]
fn an_instructors_term_from_roster_to_the_platforms_import() {
    let dir = Scratch::new("gradebook");
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

    // The roster, from Canvas's gradebook export.
    let roster = project_root().join("tests/rosters/canvas.csv");
    let (code, out, err) = gradebook(&["roster", roster.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("4 added, 0 updated, 0 unchanged"), "{out}");

    // The class: Ada on time, Grace two days late with a named mistake, Eve late but extended, Alan with
    // nothing, and a folder renamed to a name the roster does not know.
    let class = dir.join("class");
    hand_in(&class.join("ada"), "2026-12-01 10:00:00 UTC");
    hand_in(&class.join("grace"), "2026-12-03 10:00:00 UTC");
    let mistake = project_root().join("tests/exercise-mistakes/attention_head/keys_from_query_map.rs");
    std::fs::copy(&mistake, class.join("grace/attention_head.rs")).unwrap();
    hand_in(&class.join("eve"), "2026-12-03 10:00:00 UTC");
    hand_in(&class.join("my-final-version"), "2026-12-01 10:00:00 UTC");
    let class = class.to_str().unwrap().to_string();
    let (code, out, _) = gradebook(&["match", &class]);
    assert_eq!(code, Some(1), "a hand-in no one claims is worth an exit code: {out}");
    assert!(out.contains("3 hand-ins matched to the roster"), "{out}");
    assert!(out.contains("unmatched: my-final-version: no student of the roster has this login or id"), "{out}");
    assert!(out.contains("no hand-in: alan (Turing, Alan, id 104)"), "{out}");

    let (code, out, err) = gradebook(&[
        "extend",
        "eve",
        "--assignment",
        "attention",
        "--days",
        "3",
        "--reason",
        "illness, note on file",
        "--by",
        "lecturer",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("eve is due 2026-12-04T23:59:00Z for attention"), "{out}");

    let (code, out, err) = run(&["exercises", "grade", &class, "--assignment", "attention"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("recorded as run 1 of attention in"), "{err}");
    assert!(out.contains("| grace | passed | failed | 1/2 | 4/10 |"), "late and one wrong: {out}");
    assert!(out.contains("| eve | passed | passed | 2/2 | 10/10 |"), "the extension counts: {out}");
    assert!(!out.contains("my-final-version"), "an unmatched folder is listed, not graded: {out}");

    // Grace fixes her file: only she is graded again.
    std::fs::copy(solution("attention_head"), Path::new(&class).join("grace/attention_head.rs")).unwrap();
    let (code, out, err) = run(&["exercises", "grade", &class, "--assignment", "attention", "--student", "grace"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("recorded as run 2 of attention") && out.contains("| grace | passed | passed | 2/2 | 8/10 |"),
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

    let (code, out, _) = gradebook(&["history", "grace"]);
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "grace (Hopper, Grace; id 102, section Monday):");
    assert!(
        lines[1].contains("run 1 of attention")
            && lines[1].contains("attention_head failed (keys_from_query_map) 0/5, 2 days late"),
        "{out}"
    );
    assert!(
        lines[2].contains("run 2 of attention") && lines[2].contains("attention_head passed 4/5, 2 days late"),
        "{out}"
    );

    // The exports: every row on its student, by the platform's ids.
    let canvas = dir.join("canvas.csv");
    let (code, _, err) = gradebook(&["export", "--format", "canvas", "--out", canvas.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let text = std::fs::read_to_string(&canvas).unwrap();
    let rows = rows_by(&text, "ID");
    let attention = |id: &str| rows[id]["attention (501)"].clone();
    assert_eq!([attention("101"), attention("102"), attention("103"), attention("104")], ["7", "8", "10", ""]);
    assert_eq!(rows[""]["Student"], "    Points Possible");
    assert!(rows["103"]["Student"].starts_with("'="), "a formula in a name is quoted");
    let moodle = dir.join("moodle.csv");
    let (code, _, _) = gradebook(&["export", "--format", "moodle", "--out", moodle.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    let rows = rows_by(&std::fs::read_to_string(&moodle).unwrap(), "ID number");
    assert_eq!(
        (rows["S-102"]["attention"].as_str(), rows["S-102"]["Feedback: attention"].as_str()),
        ("8", "2 days late")
    );
    assert_eq!(rows["S-103"]["Feedback: attention"], "due date extended to 2026-12-04T23:59:00Z");

    // The report and the similarity page, from the gradebook alone: the class folder is gone.
    std::fs::rename(&class, dir.join("class-moved")).unwrap();
    let report = dir.join("report");
    let (code, _, err) =
        gradebook(&["report", "--assignment", "attention", "--out", report.to_str().unwrap(), "--similarity"]);
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
    assert!(similar.contains("<title>Similarity report: attention (from the gradebook)</title>"), "{similar}");

    // The second assignment, from a Canvas bulk download: by the Canvas id in each file's name.
    let download = dir.join("download");
    std::fs::create_dir_all(&download).unwrap();
    std::fs::copy(solution("cross_attention"), download.join("lovelaceada_101_9001_cross_attention.rs")).unwrap();
    let scaled = project_root().join("tests/exercise-mistakes/cross_attention/scaled_by_d.rs");
    std::fs::copy(scaled, download.join("hoppergrace_LATE_102_9002_cross_attention-1.rs")).unwrap();
    std::fs::copy(solution("cross_attention"), download.join("someoneelse_999_9003_cross_attention.rs")).unwrap();
    let (code, out, err) = run(&["exercises", "grade", download.to_str().unwrap(), "--assignment", "decoder"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("2 hand-ins matched to the roster (a Canvas download"), "{err}");
    assert!(
        err.contains("unmatched: someoneelse_999_9003_cross_attention.rs: Canvas id 999 is not in the roster"),
        "{err}"
    );
    assert!(err.contains("marked LATE by Canvas (a download has no hand-in time"), "{err}");
    assert!(err.contains("the late policy does not count these): grace"), "{err}");
    assert!(out.contains("| ada | passed | 1/1 | 20/20 |") && out.contains("| grace | failed | 0/1 | 0/20 |"), "{out}");
    let (_, out, _) = gradebook(&["show"]);
    assert!(out.contains("| ada | 7 | 20 |") && out.contains("| alan | – | – |"), "{out}");

    // Every command above is one exercises/README.md gives.
    let readme = std::fs::read_to_string(project_root().join("exercises/README.md")).unwrap();
    for command in [
        "anatomy exercises gradebook roster",
        "anatomy exercises gradebook match",
        "anatomy exercises gradebook extend",
        "--assignment attention",
        "--student",
        "anatomy exercises gradebook override",
        "anatomy exercises gradebook history",
        "anatomy exercises gradebook export --format canvas",
        "anatomy exercises gradebook export --format moodle",
        "anatomy exercises gradebook report",
        "anatomy exercises gradebook show",
    ] {
        assert!(readme.contains(command), "exercises/README.md does not give `{command}`");
    }
}
