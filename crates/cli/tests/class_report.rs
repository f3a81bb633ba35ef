//! The class report, through the binary as an instructor makes it: a class in which every wrong answer of
//! three exercises was handed in by two students (and one student calls a finished operation the rules
//! forbid) is graded with `--report`; `summary.json` must count each of those mistakes exactly twice under
//! its own name, the refusal once, and agree with the JSON lines; the report made again from those JSON
//! lines (`anatomy exercises report`) must be the same page and the same summary.
//!
//! It needs `solutions/` (every other exercise of each student is the reference solution).
#![cfg(anatomy_solutions)]

#[path = "../../../tests/common/class.rs"]
mod class;
#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;

use std::collections::BTreeMap;
use std::path::Path;

use anatomy_course::project_root;
use class::{
    anatomy, counted_in, grade_with_report, hand_in_solutions, json_lines, report_agrees, report_made_again_the_same,
    Counted,
};
use test_dir::TestDir;

const EXERCISES: [&str; 3] = ["layer_norm", "causal_mask", "mean_pooling"];

/// Writes the class into `class`: two students for each wrong answer of `EXERCISES`, each counted under its
/// name (returned; a wrong answer whose file says `//! mistake: unnamed` under "unnamed"), and one who
/// calls a finished operation the rules forbid.
fn make_class(class: &Path) -> Counted {
    let mut made = Counted::new();
    for exercise in EXERCISES {
        let folder = project_root().join("tests/exercise-mistakes").join(exercise);
        let mut files: Vec<_> = std::fs::read_dir(&folder).unwrap().map(|f| f.unwrap().path()).collect();
        files.sort();
        for file in files {
            let stem = file.file_stem().unwrap().to_string_lossy().to_string();
            let unnamed = std::fs::read_to_string(&file).unwrap().lines().any(|l| l.trim() == "//! mistake: unnamed");
            let id = if unnamed { "unnamed".to_string() } else { stem.clone() };
            for copy in ["a", "b"] {
                // "EXERCISE-ID-FILE_COPY": the mistake's id is what the feedback must name.
                let student = class.join(format!("{exercise}-{id}-{stem}_{copy}"));
                hand_in_solutions(&student);
                std::fs::copy(&file, student.join(format!("{exercise}.rs"))).unwrap();
            }
            *made.entry((exercise.to_string(), id)).or_insert(0) += 2;
        }
    }
    let cheat = class.join("zz-shortcut");
    hand_in_solutions(&cheat);
    std::fs::copy(project_root().join("tests/hostile-class/shortcuts/layer_norm.rs"), cheat.join("layer_norm.rs"))
        .unwrap();
    made
}

#[test]
fn each_mistake_of_a_class_is_counted_under_its_name_and_the_report_can_be_made_again() {
    let dir = TestDir::new("class-report");
    let class = dir.join("class");
    let made = make_class(&class);
    let students = made.values().sum::<usize>() + 1;

    let report = dir.join("report");
    let csv = dir.join("grades.csv");
    let only = EXERCISES.join(",");
    let (code, out, err) = grade_with_report(&class, &csv, &report, &["--only", &only]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("wrote the class report to"), "{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["students"], students);

    // Each wrong answer: two students, under its own name; nothing else named.
    assert_eq!(counted_in(&summary["mistakes"]), made);
    for m in summary["mistakes"].as_array().unwrap() {
        assert!((m["share"].as_f64().unwrap() - 2.0 / students as f64).abs() < 1e-3, "{m}");
        assert!(m["hint"].as_str().is_some_and(|h| !h.is_empty()), "{m}");
    }
    let refused = (("layer_norm".to_string(), "refused_by_rules".to_string()), 1);
    assert_eq!(counted_in(&summary["stops"]), Counted::from([refused.clone()]));

    // The summary agrees with the JSON lines, per exercise and per mistake, and with the CSV's notes.
    let lines = json_lines(&out);
    assert_eq!(lines.len(), students);
    let mut from_summary = made.clone();
    from_summary.extend([refused]);
    assert_eq!(report_agrees(&report, &lines, &csv, &EXERCISES), from_summary);

    // One link per student, to a feedback file that exists and names the mistake.
    let page = std::fs::read_to_string(report.join("index.html")).unwrap();
    for (student, file) in
        summary["feedback"].as_array().unwrap().iter().map(|f| (f[0].as_str().unwrap(), f[1].as_str().unwrap()))
    {
        assert!(page.contains(&format!("href=\"{file}\"")), "{student}");
        let feedback = std::fs::read_to_string(report.join(file)).unwrap();
        // "EXERCISE-ID-FILE_a": the feedback names ID.
        if let Some((id, _)) = student.split_once('-').and_then(|(_, rest)| rest.rsplit_once('-')) {
            assert!(feedback.contains(&format!("Mistake: `{id}`")), "{student}: {feedback}");
        }
    }

    // Made again from the JSON lines, without grading: the same summary and the same page.
    let grades = report_made_again_the_same(&dir, &out, &report);
    // A file that is not a grading's lines is refused in one line, and nothing is written.
    std::fs::write(&grades, "not json\n").unwrap();
    let nothing = dir.join("nothing");
    let (code, _, err) =
        anatomy(&["exercises", "report", grades.to_str().unwrap(), "--out", nothing.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("line 1 is not JSON"), "{err}");
    assert!(!nothing.exists());
}

/// A late policy with a due date: each student's hand-in time comes from nbgrader's `timestamp.txt` (at the
/// top of their folder or one folder down); a late student keeps the policy's share of every point, in the
/// JSON lines, the CSV, the feedback and the report, which lists who was late; a timestamp that is a link
/// is not read. Without a policy, or with a due date that is not one, grading is refused in one line.
#[test]
fn late_hand_ins_keep_the_policys_share_and_the_report_lists_them() {
    let dir = TestDir::new("class-late");
    let class = dir.join("class");
    let stamp = |student: &str, at: &str, text: &str| {
        let folder = class.join(student).join(at);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("timestamp.txt"), text).unwrap();
    };
    for student in ["early", "two-days", "too-late", "no-time", "linked"] {
        hand_in_solutions(&class.join(student));
    }
    stamp("early", "ps1", "2026-11-30 10:00:00.123456 UTC\n"); // nbgrader's submitted/STUDENT/ASSIGNMENT/
    stamp("two-days", "", "2026-12-03 08:00:00 UTC"); // 32 hours late: two days begun
    stamp("too-late", "", "2026-12-09T00:00:00Z"); // past max_days: nothing kept
    std::fs::write(dir.join("early-stamp"), "2026-11-30 10:00:00 UTC").unwrap();
    std::os::unix::fs::symlink(dir.join("early-stamp"), class.join("linked/timestamp.txt")).unwrap();
    let course_text = std::fs::read_to_string(project_root().join("exercises/course.toml")).unwrap();
    let course = dir.join("course.toml");
    std::fs::write(&course, format!("{course_text}\n[late]\npenalty_per_day = 0.1\nmax_days = 3\n")).unwrap();
    let (report, csv, feedback) = (dir.join("report"), dir.join("grades.csv"), dir.join("feedback"));
    let grade = |extra: &[&str]| {
        let mut args = vec!["exercises", "grade", class.to_str().unwrap(), "--only", "layer_norm", "--json"];
        args.extend_from_slice(extra);
        anatomy(&args)
    };
    let (code, out, err) = grade(&[
        "--course",
        course.to_str().unwrap(),
        "--due",
        "2026-12-01T23:59:00Z",
        "--csv",
        csv.to_str().unwrap(),
        "--feedback",
        feedback.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let lines: BTreeMap<String, serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|l| (l["student"].as_str().unwrap().to_string(), l))
        .collect();
    let got: Vec<(&str, serde_json::Value, f64)> =
        lines.iter().map(|(s, l)| (s.as_str(), l["days_late"].clone(), l["total_points"].as_f64().unwrap())).collect();
    use serde_json::json;
    assert_eq!(
        got,
        [
            ("early", json!(0), 5.0),
            ("linked", json!(null), 5.0),
            ("no-time", json!(null), 5.0),
            ("too-late", json!(8), 0.0),
            ("two-days", json!(2), 4.0),
        ]
    );
    assert_eq!(lines["early"]["handed_in"], "2026-11-30T10:00:00.123456Z");
    assert_eq!(lines["two-days"]["points"]["layer_norm"], 4.0, "each exercise's points keep the share");
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let late = reader.headers().unwrap().iter().position(|h| h == "days late").expect("a days-late column");
    let days: Vec<String> = reader.records().map(|r| r.unwrap()[late].to_string()).collect();
    assert_eq!(days, ["0", "", "", "8", "2"]);
    let two_days = std::fs::read_to_string(feedback.join("two-days.md")).unwrap();
    assert!(two_days.contains("4 of 5 points") && two_days.contains("Submitted 2 days late: the course keeps 80 %"));
    assert!(!std::fs::read_to_string(feedback.join("early.md")).unwrap().contains("late"));

    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap();
    let late = &summary["late"];
    assert_eq!(late["due"], "2026-12-01T23:59:00Z");
    assert_eq!(late["on_time"], 1);
    let listed: Vec<(&str, u64, f64)> = late["late"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["student"].as_str().unwrap(), l["days"].as_u64().unwrap(), l["kept"].as_f64().unwrap()))
        .collect();
    assert_eq!(listed, [("too-late", 8, 0.0), ("two-days", 2, 0.8)], "latest first");
    assert_eq!(late["unknown"], json!(["linked", "no-time"]));
    let page = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(page.contains("<h2>Late hand-ins</h2>") && page.contains("1 on time, 2 late."), "{page}");

    // Made again from the JSON lines with the same course file: the same summary.
    let grades = dir.join("grades.jsonl");
    std::fs::write(&grades, &out).unwrap();
    let again = dir.join("again");
    let (code, _, err) = anatomy(&[
        "exercises",
        "report",
        grades.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
        "--course",
        course.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        std::fs::read_to_string(report.join("summary.json")).unwrap(),
        std::fs::read_to_string(again.join("summary.json")).unwrap()
    );

    // A due date without a policy, and a due date that is not a date: one line each, exit 1, nothing graded.
    let (code, out, err) = grade(&["--due", "2026-12-01T23:59:00Z"]);
    assert_eq!((code, out.as_str()), (Some(1), ""), "{err}");
    assert!(err.contains("--due needs a late policy: add a [late] table"), "{err}");
    let (code, _, err) = grade(&["--course", course.to_str().unwrap(), "--due", "tomorrow"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("\"tomorrow\" is not a date") && err.lines().count() == 1, "{err}");
}
