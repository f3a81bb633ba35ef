//! The course file's tests: lateness, assignments, and every value refused where it enters.
use super::*;

/// The keys the export formats read (`anatomy_gradebook::export::course_keys`, a later stage than this one).
const TITLE_KEYS: &[&str] = &["canvas", "moodle"];

#[test]
fn a_day_begun_late_counts_whole_and_the_policy_keeps_its_share() {
    let parse_time = |t: &str| OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).unwrap();
    let due = parse_time("2026-12-01T23:59:00Z");
    let days = |t: &str| Late::days(parse_time(t), due);
    assert_eq!(days("2026-11-01T00:00:00Z"), 0);
    assert_eq!(days("2026-12-01T23:59:00Z"), 0, "on the minute is on time");
    assert_eq!(days("2026-12-01T23:59:01Z"), 1);
    assert_eq!(days("2026-12-02T23:59:00Z"), 1);
    assert_eq!(days("2026-12-02T23:59:01Z"), 2);
    let policy = Late { penalty_per_day: 0.25, max_days: 3 };
    assert_eq!([0, 1, 3, 4].map(|d| policy.kept(d)), [1.0, 0.75, 0.25, 0.0]);
    assert_eq!([0, 1, 3, 4].map(|d| policy.keep(4.5, d)), [4.5, 3.38, 1.13, 0.0], "to a hundredth");
    assert_eq!(earned_of(5.0, Status::Failed, Some((1, 2))), 2.5);
    assert_eq!([Status::Passed, Status::Failed, Status::NotDone].map(|s| earned_of(5.0, s, None)), [5.0, 0.0, 0.0]);
    assert_eq!(
        policy.words(1),
        "Submitted 1 day late: the course keeps 75 % of the points (a 25 % penalty per day, nothing after 3 days)."
    );
    assert_eq!(policy.words(0), "Submitted on time: the course keeps all of the points.", "never \"0 days late\"");
}

#[test]
fn a_course_declares_its_assignments_or_has_one_of_every_exercise() {
    let dir = crate::test_dir::TestDir::new("grade-course-assignments");
    let load = |text: &str| {
        let file = dir.join("course.toml");
        std::fs::write(&file, text).unwrap();
        CourseFile::load(&file, TITLE_KEYS)
    };
    let none = load("").unwrap();
    assert_eq!(none.assignment(None).unwrap().exercises.len(), EXERCISES.len());
    assert_eq!(none.assignment(Some(ALL)).unwrap().name, ALL);
    assert!(none.assignment(Some("week1")).unwrap_err().to_string().contains("declares no assignment \"week1\""));
    let two = load(
        "[assignments.attention]\nexercises = [\"scaled_dot_product\", \"attention_head\"]\ndue = \"2026-12-01T23:59:00Z\"\n\
         [assignments.decoder]\nexercises = [\"cross_attention\"]\n",
    )
    .unwrap();
    let attention = two.assignment(Some("attention")).unwrap();
    assert_eq!(
        attention.exercises.iter().map(|e| e.name).collect::<Vec<_>>(),
        ["scaled_dot_product", "attention_head"]
    );
    assert_eq!(attention.due.map(format_time).as_deref(), Some("2026-12-01T23:59:00Z"));
    assert_eq!(two.assignment(None).unwrap_err().to_string(), "name the assignment: --assignment attention|decoder");
    assert_eq!(two.all_assignments().len(), 2);
    // A Canvas title of any characters, beside a short name.
    let titled = load(
        "[assignments.decoder]\nexercises = [\"cross_attention\"]\ncanvas = \"Homework 2: Decoder (48214)\"\n\
         moodle = \"Assignment: Homework 2: Decoder\"\n",
    )
    .unwrap();
    let decoder = titled.assignment(Some("decoder")).unwrap();
    assert_eq!(
        (decoder.title("canvas"), decoder.title("moodle")),
        (Some("Homework 2: Decoder (48214)"), Some("Assignment: Homework 2: Decoder"))
    );
    for (text, says) in [
        (
            "[assignments.a]\nexercises = [\"layer_norm\"]\n[assignments.b]\nexercises = [\"layer_norm\"]\n",
            "an exercise belongs to one",
        ),
        ("[assignments.a]\nexercises = [\"softmax\"]\n", "unknown exercise"),
        ("[assignments.\"a b\"]\nexercises = [\"layer_norm\"]\n", "letters, digits"),
        ("[assignments.a]\nexercises = []\n", "lists no exercise"),
        ("[assignments.a]\nexercises = [\"layer_norm\"]\ndue = \"friday\"\n", "is not a date"),
        ("[assignments.a]\nexercises = [\"layer_norm\"]\ncanvas = \" \"\n", "canvas = \" \" must be the platform's title"),
        (
            "[assignments.a]\nexercises = [\"layer_norm\"]\nmoodle = \"X\"\n[assignments.b]\nexercises = [\"causal_mask\"]\nmoodle = \"X\"\n",
            "a and b both give moodle = \"X\"",
        ),
        ("[assignments.\"Homework 2: Decoder\"]\nexercises = [\"layer_norm\"]\n", "canvas = \"Homework 2: Decoder\""),
        (
            "[assignments.a]\nexercises = [\"layer_norm\"]\ncanva = \"X\"\n",
            "the assignment a has `canva`, which no export format reads: an assignment gives exercises, due and a \
             platform's title under canvas, moodle",
        ),
        ("[assignments.a]\nexercises = [\"layer_norm\"]\ncanvas = 5\n", "a's canvas must be the platform's title, in quotes"),
    ] {
        let error = format!("{:#}", load(text).unwrap_err());
        assert!(error.contains(says), "{error}");
    }
}

#[test]
fn points_and_penalties_that_are_not_finite_negative_or_minus_zero_are_refused_naming_the_file() {
    let dir = crate::test_dir::TestDir::new("grade-course-points");
    let file = dir.join("course.toml");
    let load = |text: &str| {
        std::fs::write(&file, text).unwrap();
        CourseFile::load(&file, TITLE_KEYS).map(|c| c.points["layer_norm"]).map_err(|e| format!("{e:#}"))
    };
    let shown = file.display();
    for (value, said) in
        [("inf", "inf"), ("-inf", "-inf"), ("nan", "NaN"), ("-5", "-5.0"), ("-0.0", "-0.0"), ("-1e-300", "-1e-300")]
    {
        assert_eq!(
            load(&format!("[points]\nlayer_norm = {value}\n")).unwrap_err(),
            format!("{shown}: the points of layer_norm are {said}: give a number of 0 or more, such as layer_norm = 5"),
            "{value}"
        );
    }
    assert_eq!(load("[points]\nlayer_norm = 0\n").unwrap().to_bits(), 0.0f64.to_bits(), "0 is a weight of nothing");
    assert_eq!(load("[points]\nlayer_norm = -0\n").unwrap().to_bits(), 0.0f64.to_bits(), "TOML's integer -0 is 0");
    assert_eq!(load("[points]\nlayer_norm = 7.5\n").unwrap(), 7.5);
    for (value, said) in [("-0.0", "-0.0"), ("1.5", "1.5"), ("nan", "NaN"), ("-0.1", "-0.1")] {
        assert_eq!(
            load(&format!("[late]\npenalty_per_day = {value}\nmax_days = 3\n")).unwrap_err(),
            format!(
                "{shown}: [late] penalty_per_day is {said}: give the share of the score lost per day, between 0 and 1 \
                 (0.1 is 10 %)"
            )
        );
    }
    // Sparse: a course file of 1 GiB costs no disk, and is refused before it is read.
    std::fs::File::create(&file).unwrap().set_len(1 << 30).unwrap();
    assert_eq!(
        format!("{:#}", CourseFile::load(&file, TITLE_KEYS).unwrap_err()),
        format!(
            "{shown} is 1 GiB, more than the 256 KiB a course file may be: give the course file \
             (exercises/course.toml is the example), a few kilobytes of TOML"
        )
    );
}
