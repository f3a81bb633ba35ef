//! The class report's promises, over its three jobs: what it counts, what the page shows, and where each
//! student's feedback goes.
use super::{page, Summary};
use anatomy_course::{find, Exercise, Status};
use anatomy_grade::points::{self, CourseFile};
use anatomy_grade::sandbox::Tier;

use crate::sheet::{feedback_files, Row, Sheet};

pub(super) fn outcome(name: &'static str, status: Status, mistake: Option<&str>) -> anatomy_course::Outcome {
    anatomy_course::Outcome {
        name,
        label: name.into(),
        status,
        message: format!("message of {name}"),
        parts: None,
        mistake: mistake.map(String::from),
        output: None,
    }
}

pub(super) fn class() -> (Vec<&'static Exercise>, CourseFile, Vec<Row>) {
    let chosen = vec![find("layer_norm").unwrap(), find("causal_mask").unwrap()];
    let course = CourseFile::load(&points::default_file(), &["canvas", "moodle"]).unwrap();
    let row = |student: &str, a: (Status, Option<&str>), b: (Status, Option<&str>)| Row {
        student: student.into(),
        outcomes: vec![outcome("layer_norm", a.0, a.1), outcome("causal_mask", b.0, b.1)],
        handed_in: None,
        extension: None,
    };
    let rows = vec![
        row("ada", (Status::Passed, None), (Status::Passed, None)),
        row("bob", (Status::Failed, Some("unbiased_variance")), (Status::Passed, None)),
        row(
            "<script>alert(1)</script>",
            (Status::Failed, Some("unbiased_variance")),
            (Status::Failed, Some("timed_out")),
        ),
        row("d e#?", (Status::NotDone, None), (Status::DoesNotCompile, Some("does_not_compile"))),
    ];
    (chosen, course, rows)
}

#[test]
fn the_summary_counts_statuses_mistakes_and_points() {
    let (chosen, course, rows) = class();
    let sheet = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
    let s = Summary::new(&sheet, &rows, None);
    assert_eq!(s.students, 4);
    assert_eq!((s.statuses[0].passed, s.statuses[0].failed, s.statuses[0].not_done), (1, 2, 1));
    assert_eq!((s.statuses[1].passed, s.statuses[1].failed, s.statuses[1].does_not_compile), (2, 1, 1));
    assert_eq!(s.mistakes.len(), 1);
    assert_eq!(
        (s.mistakes[0].mistake.as_str(), s.mistakes[0].students, s.mistakes[0].share),
        ("unbiased_variance", 2, 0.5)
    );
    assert!(s.mistakes[0].hint.is_some() && s.mistakes[0].message.is_some());
    let stops: Vec<(&str, usize)> = s.stops.iter().map(|m| (m.mistake.as_str(), m.students)).collect();
    assert_eq!(stops, [("does_not_compile", 1), ("timed_out", 1)], "course order, then by id");
    assert!(s.stops.iter().all(|m| m.message.is_none()), "a stop's message may name a student's files");
    // Totals: full marks, one of two exercises, none, none.
    let (a, b) = (course.max("layer_norm"), course.max("causal_mask"));
    let mut totals = [a + b, b, 0.0, 0.0];
    totals.sort_by(f64::total_cmp);
    assert_eq!(s.points.median, (totals[1] + totals[2]) / 2.0);
    assert_eq!(s.points.histogram.iter().map(|h| h.2).sum::<usize>(), 4, "full marks fall in the last bin");
    assert_eq!(s.points.histogram[9].2, 1);
}

#[test]
fn the_page_escapes_names_links_them_safely_and_titles_every_chart() {
    let (chosen, course, rows) = class();
    let sheet = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
    let html = page(&Summary::new(&sheet, &rows, None));
    assert!(!html.contains("<script"), "a student's name is text, never markup");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("href=\"feedback/d%20e%23%3F.md\""), "a link to the file, whatever the name");
    assert!(html.contains("href=\"feedback/%3Cscript%3Ealert%281%29%3C_script%3E.md\""));
    let charts = html.matches("<svg").count();
    assert_eq!(charts, 3, "mistakes, statuses, points");
    assert_eq!(html.matches("<title>").count(), charts + 1, "every chart and the page have a title");
    let namespaces = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
    assert_eq!(html.matches("http").count(), namespaces, "no address but the SVG namespace: nothing from the network");
    assert!(!html.contains("src="), "nothing loaded: the page is self-contained");
}

#[test]
fn late_hand_ins_show_only_under_a_late_policy_and_say_how_to_count_them() {
    let (chosen, mut course, rows) = class();
    let sheet = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
    let s = Summary::new(&sheet, &rows, None);
    assert_eq!(s.late, None, "the course file has no [late] table");
    assert!(!page(&s).contains("Late hand-ins"));
    course.late = Some(points::Late { penalty_per_day: 0.1, max_days: 5 });
    let sheet = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
    let s = Summary::new(&sheet, &rows, None);
    let late = s.late.as_ref().unwrap();
    assert_eq!((late.due.as_deref(), late.on_time, late.late.len(), late.unknown.len()), (None, 0, 0, 0));
    assert!(page(&s).contains("This grading had no due date: grade with <code>--due"));
}

#[test]
fn an_extension_moves_the_due_date_the_late_policy_counts_from_and_its_reason_stays_with_the_instructor() {
    use crate::sheet::Extension;
    let at = |s: &str| time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).unwrap();
    let (chosen, mut course, mut rows) = class();
    course.late = Some(points::Late { penalty_per_day: 0.1, max_days: 5 });
    rows.truncate(3);
    let handed_in = Some(at("2026-03-03T10:00:00Z")); // 46 hours after the class's due date
    for row in &mut rows {
        row.handed_in = handed_in;
    }
    rows[0].extension = Some(Extension { due: at("2026-03-04T12:00:00Z"), reason: "illness".into() });
    rows[2].extension = Some(Extension { due: at("2026-03-02T12:00:00Z"), reason: "travel".into() });
    let sheet = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: Some(at("2026-03-01T12:00:00Z")) };
    // ada: on time by her own date; bob: two days begun after the class's; the third: one after theirs.
    let days: Vec<_> = rows.iter().map(|r| sheet.days_late(r)).collect();
    assert_eq!(days, [Some(0), Some(2), Some(1)]);
    let kept: Vec<_> = rows.iter().map(|r| sheet.kept(r)).collect();
    assert_eq!(kept, [1.0, 0.8, 0.9]);
    let ada = &rows[0];
    assert_eq!(sheet.earned(ada, &ada.outcomes[0]), course.max("layer_norm"));
    let feedback = sheet.feedback(ada);
    assert!(feedback.contains("Your due date was extended to 2026-03-04T12:00:00Z."), "{feedback}");
    assert!(!feedback.contains("illness") && !feedback.contains("late:"), "{feedback}");
    assert!(!sheet.feedback(&rows[1]).contains("extended"));
    let late = Summary::new(&sheet, &rows, None).late.unwrap();
    assert_eq!(late.on_time, 1);
    let counted: Vec<_> = late.late.iter().map(|l| (l.student.as_str(), l.days, l.kept)).collect();
    assert_eq!(counted, [("bob", 2, 0.8), ("<script>alert(1)</script>", 1, 0.9)]);
    let extended: Vec<_> = late.extended.iter().map(|e| (e.student.as_str(), e.reason.as_str())).collect();
    assert_eq!(extended, [("ada", "illness"), ("<script>alert(1)</script>", "travel")]);
    let page = page(&Summary::new(&sheet, &rows, None));
    assert!(page.contains("2 with an extension, counted from their own due date:") && page.contains("travel"));
}

#[test]
fn a_name_with_a_slash_stays_in_the_feedback_folder_and_no_two_share_a_file() {
    let rows: Vec<Row> = ["a/../b", "..", "", "Ana", "ana", "ANA", "a_.._b", "caf\\xE9", "caf\\xE8"]
        .iter()
        .map(|s| Row { student: s.to_string(), outcomes: Vec::new(), handed_in: None, extension: None })
        .collect();
    let files = feedback_files(&rows);
    assert_eq!(
        files,
        [
            "a_.._b.md",
            "_.._.md",
            "_.md",
            "Ana.md",
            "ana (2).md",
            "ANA (3).md",
            "a_.._b (2).md",
            "caf_xE9.md",
            "caf_xE8.md"
        ]
    );
    // Two long labels that differ only at their end: each file name within the 255 bytes a name may
    // have, and apart.
    let long = |last: &str| Row {
        student: format!("{}{last}", "é".repeat(150)),
        outcomes: Vec::new(),
        handed_in: None,
        extension: None,
    };
    let files = feedback_files(&[long("a"), long("b")]);
    assert!(files.iter().all(|f| f.len() <= 200) && files[0] != files[1], "{files:?}");
}

fn plain_sheet<'a>(chosen: &'a [&'static Exercise], course: &'a CourseFile) -> Sheet<'a> {
    Sheet { chosen, course, tier: &Tier::None, due: None }
}

#[test]
fn the_points_fall_in_ten_equal_bins_with_the_mean_and_median_of_the_totals() {
    let (chosen, course, rows) = class();
    // Totals: ada 10 (both passed), bob 5, the other two 0; full marks are 10.
    let s = Summary::new(&plain_sheet(&chosen, &course), &rows, None);
    assert_eq!((s.max_points, s.points.mean, s.points.median), (10.0, 3.75, 2.5));
    let expected: Vec<(f64, f64, usize)> =
        (0..10).map(|b| (b as f64, b as f64 + 1.0, [2, 0, 0, 0, 0, 1, 0, 0, 0, 1][b])).collect();
    assert_eq!(s.points.histogram, expected, "5 opens the sixth bin; 10 closes the last");
    // Three students: the median is the middle total, the mean rounded to a thousandth.
    let s = Summary::new(&plain_sheet(&chosen, &course), &rows[..3], None);
    assert_eq!((s.points.mean, s.points.median), (5.0, 5.0));
    let s = Summary::new(&plain_sheet(&chosen, &course), &rows[1..], None);
    assert_eq!((s.points.mean, s.points.median), (1.667, 0.0));
}

#[test]
fn an_empty_class_or_an_empty_choice_counts_zeros_without_dividing_by_them() {
    let (_, course, rows) = class();
    let none: Vec<&'static Exercise> = Vec::new();
    let s = Summary::new(&plain_sheet(&none, &course), &[], None);
    assert_eq!((s.students, s.max_points, s.points.mean, s.points.median), (0, 0.0, 0.0, 0.0));
    assert_eq!(s.points.histogram.first(), Some(&(0.0, 1.0, 0)), "bins of 1 when there is nothing to earn");
    assert_eq!(s.points.histogram.last(), Some(&(9.0, 10.0, 0)));
    assert!(s.statuses.is_empty() && s.mistakes.is_empty() && s.stops.is_empty() && s.feedback.is_empty());
    assert_eq!((s.similarity, s.late), (None, None));
    let no_outcomes: Vec<Row> = rows.iter().map(|r| Row { outcomes: Vec::new(), ..r.clone() }).collect();
    let s = Summary::new(&plain_sheet(&none, &course), &no_outcomes, None);
    assert_eq!(s.points.histogram[0].2, 4, "every total of 0 in the first bin");
}

#[test]
fn mistakes_are_most_frequent_first_ties_in_course_order_each_with_its_share_first_message_and_hint() {
    let (chosen, course, _) = class();
    let row = |student: &str, a: Option<&str>, b: Option<&str>| {
        let mut outcomes = vec![outcome("layer_norm", Status::Failed, a), outcome("causal_mask", Status::Failed, b)];
        outcomes[1].message = format!("{student}'s mask");
        Row { student: student.into(), outcomes, handed_in: None, extension: None }
    };
    let rows = [
        row("a", Some("unnamed"), Some("no_diagonal")),
        row("b", Some("unbiased_variance"), Some("no_diagonal")),
        row("c", None, Some("no_diagonal")),
    ];
    let s = Summary::new(&plain_sheet(&chosen, &course), &rows, None);
    let counted: Vec<_> =
        s.mistakes.iter().map(|m| (m.exercise.as_str(), m.mistake.as_str(), m.students, m.share)).collect();
    assert_eq!(
        counted,
        [
            ("causal_mask", "no_diagonal", 3, 1.0),
            ("layer_norm", "unbiased_variance", 1, 0.333),
            ("layer_norm", "unnamed", 1, 0.333)
        ]
    );
    assert_eq!(s.mistakes[0].message.as_deref(), Some("a's mask"), "the first student's message");
    assert_eq!(s.mistakes[0].words, "no diagonal");
    assert_eq!(s.mistakes[2].words, "a failure no named mistake covers");
    assert_eq!(s.mistakes[2].message, None, "no name covers it: its messages differ");
    let hint = find("causal_mask").unwrap().hint_levels().into_iter().next();
    assert_eq!(s.mistakes[0].hint, hint);
    assert!(s.stops.is_empty());
    let statuses: Vec<_> = s.statuses.iter().map(|r| (r.exercise.as_str(), r.failed, r.passed)).collect();
    assert_eq!(statuses, [("layer_norm", 3, 0), ("causal_mask", 3, 0)]);
}

#[test]
fn the_closing_line_names_the_most_frequent_mistake_with_its_number_of_students() {
    let (chosen, course, rows) = class();
    let dir = std::path::Path::new("/reports/week 3");
    let s = Summary::new(&plain_sheet(&chosen, &course), &rows, None);
    assert_eq!(
        s.closing_line(dir),
        "wrote the class report to /reports/week 3/index.html; the most frequent mistake: unbiased_variance in \
         layer_norm (2 students)"
    );
    let s = Summary::new(&plain_sheet(&chosen, &course), &rows[..2], None);
    assert!(s.closing_line(dir).ends_with("unbiased_variance in layer_norm (1 student)"), "{}", s.closing_line(dir));
    let s = Summary::new(&plain_sheet(&chosen, &course), &rows[..1], None);
    assert_eq!(s.closing_line(dir), "wrote the class report to /reports/week 3/index.html");
}

#[test]
fn late_hand_ins_are_listed_latest_first_and_a_missing_hand_in_time_is_unknown_under_a_due_date() {
    let at = |s: &str| time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).unwrap();
    let (chosen, mut course, mut rows) = class();
    course.late = Some(points::Late { penalty_per_day: 0.25, max_days: 3 });
    let times = [Some("2026-03-01T11:00:00Z"), Some("2026-03-01T13:00:00Z"), Some("2026-03-05T12:00:01Z"), None];
    for (row, time) in rows.iter_mut().zip(times) {
        row.handed_in = time.map(at);
    }
    let due = Some(at("2026-03-01T12:00:00Z"));
    let late = Summary::new(&Sheet { due, ..plain_sheet(&chosen, &course) }, &rows, None).late.unwrap();
    assert_eq!((late.due.as_deref(), late.penalty_per_day, late.max_days), (Some("2026-03-01T12:00:00Z"), 0.25, 3));
    assert_eq!((late.on_time, late.unknown.as_slice()), (1, ["d e#?".to_string()].as_slice()));
    let listed: Vec<_> = late.late.iter().map(|l| (l.student.as_str(), l.handed_in.as_str(), l.days, l.kept)).collect();
    assert_eq!(
        listed,
        [("<script>alert(1)</script>", "2026-03-05T12:00:01Z", 5, 0.0), ("bob", "2026-03-01T13:00:00Z", 1, 0.75)],
        "latest first; past the policy's days nothing is kept"
    );
    assert!(late.extended.is_empty());
}

#[test]
fn similar_pairs_are_counted_with_their_score_to_a_thousandth_and_their_evidence_in_words() {
    use anatomy_intake::similarity::{Evidence, Pair};
    let (chosen, course, rows) = class();
    let pair = |students: [&str; 2], score, evidence| Pair {
        exercise: "layer_norm".into(),
        students: students.map(String::from),
        score,
        shared: 12,
        regions: vec![[[1, 4], [2, 5]]],
        evidence,
        answer: 30,
    };
    let pairs = [pair(["ada", "bob"], 0.87654, Evidence::Strong), pair(["bob", "d e#?"], 2.0 / 3.0, Evidence::Weak)];
    let s = Summary::new(&plain_sheet(&chosen, &course), &rows, Some(&pairs));
    let similar: Vec<_> =
        s.similarity.as_ref().unwrap().iter().map(|p| (p.students.clone(), p.score, p.evidence.as_str())).collect();
    assert_eq!(
        similar,
        [
            (["ada".to_string(), "bob".to_string()], 0.877, "strong"),
            (["bob".to_string(), "d e#?".to_string()], 0.667, "weak")
        ]
    );
    assert_eq!(Summary::new(&plain_sheet(&chosen, &course), &rows, Some(&[])).similarity, Some(Vec::new()));
}

#[test]
fn the_summary_reads_back_from_its_json_and_an_older_one_without_extensions_still_reads() {
    let (chosen, mut course, rows) = class();
    course.late = Some(points::Late { penalty_per_day: 0.1, max_days: 5 });
    let s = Summary::new(&plain_sheet(&chosen, &course), &rows, None);
    let text = serde_json::to_string_pretty(&s).unwrap();
    assert_eq!(serde_json::from_str::<Summary>(&text).unwrap(), s);
    let mut older: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(older["late"].as_object_mut().unwrap().remove("extended").is_some());
    let read: Summary = serde_json::from_value(older).unwrap();
    assert_eq!(read.late.unwrap().extended, Vec::new());
    let feedback: Vec<(&str, &str)> = s.feedback.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert_eq!(feedback[3], ("d e#?", "feedback/d e#?.md"));
}

#[test]
fn writing_the_report_leaves_its_three_kinds_of_file_whole_and_nothing_partial() {
    let (chosen, course, rows) = class();
    let dir = crate::test_dir::TestDir::new("report-write");
    let sheet = plain_sheet(&chosen, &course);
    let summary = super::write(&dir, &sheet, &rows, None).unwrap();
    let saved: Summary = serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(saved, summary);
    assert_eq!(std::fs::read_to_string(dir.join("index.html")).unwrap(), page(&summary));
    for (row, (_, file)) in rows.iter().zip(&summary.feedback) {
        assert_eq!(std::fs::read_to_string(dir.join(file)).unwrap(), sheet.feedback(row), "{file}");
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.join("feedback"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["<script>alert(1)<_script>.md", "ada.md", "bob.md", "d e#?.md"]);
}
