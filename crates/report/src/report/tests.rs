//! The class report's promises, over its three jobs: what it counts, what the page shows, and where each
//! student's feedback goes.
use super::{page, Summary};
use crate::points::{self, CourseFile};
use crate::sandbox::Tier;
use crate::sheet::{feedback_files, Row, Sheet};
use crate::{find, Exercise, Status};

fn outcome(name: &'static str, status: Status, mistake: Option<&str>) -> crate::Outcome {
    crate::Outcome {
        name,
        label: name.into(),
        status,
        message: format!("message of {name}"),
        parts: None,
        mistake: mistake.map(String::from),
    }
}

fn class() -> (Vec<&'static Exercise>, CourseFile, Vec<Row>) {
    let chosen = vec![find("layer_norm").unwrap(), find("causal_mask").unwrap()];
    let course = CourseFile::load(&points::default_file()).unwrap();
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
    let book = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
    let s = Summary::new(&book, &rows, None);
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
    let book = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
    let html = page(&Summary::new(&book, &rows, None));
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
    let book = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
    let s = Summary::new(&book, &rows, None);
    assert_eq!(s.late, None, "the course file has no [late] table");
    assert!(!page(&s).contains("Late hand-ins"));
    course.late = Some(points::Late { penalty_per_day: 0.1, max_days: 5 });
    let book = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
    let s = Summary::new(&book, &rows, None);
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
    let book = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: Some(at("2026-03-01T12:00:00Z")) };
    // ada: on time by her own date; bob: two days begun after the class's; the third: one after theirs.
    let days: Vec<_> = rows.iter().map(|r| book.days_late(r)).collect();
    assert_eq!(days, [Some(0), Some(2), Some(1)]);
    let kept: Vec<_> = rows.iter().map(|r| book.kept(r)).collect();
    assert_eq!(kept, [1.0, 0.8, 0.9]);
    let ada = &rows[0];
    assert_eq!(book.earned(ada, &ada.outcomes[0]), course.max("layer_norm"));
    let feedback = book.feedback(ada);
    assert!(feedback.contains("Your due date was extended to 2026-03-04T12:00:00Z."), "{feedback}");
    assert!(!feedback.contains("illness") && !feedback.contains("late:"), "{feedback}");
    assert!(!book.feedback(&rows[1]).contains("extended"));
    let late = Summary::new(&book, &rows, None).late.unwrap();
    assert_eq!(late.on_time, 1);
    let counted: Vec<_> = late.late.iter().map(|l| (l.student.as_str(), l.days, l.kept)).collect();
    assert_eq!(counted, [("bob", 2, 0.8), ("<script>alert(1)</script>", 1, 0.9)]);
    let extended: Vec<_> = late.extended.iter().map(|e| (e.student.as_str(), e.reason.as_str())).collect();
    assert_eq!(extended, [("ada", "illness"), ("<script>alert(1)</script>", "travel")]);
    let page = page(&Summary::new(&book, &rows, None));
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
            "_...md",
            "_.md",
            "Ana.md",
            "ana (2).md",
            "ANA (3).md",
            "a_.._b (2).md",
            "caf\\xE9.md",
            "caf\\xE8.md"
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
