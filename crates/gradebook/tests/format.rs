//! A format written outside the library, in this one file: a toy of Blackboard's Grade Center upload
//! (`Username`, then each assignment as `NAME [Total Pts: N Score]`), keyed by the login. It implements
//! [`Writer`] and exports through [`Gradebook::export_with`]: the snapshot, the numbers every platform
//! takes, Canvas's test student and who is left out come from the library, as for its own formats. To
//! offer it on the command line too (`--format blackboard`), it would be a module of its own in
//! `crates/gradebook/src/export/`, with a `writer` function, and one line in the list `formats!` reads.
use anatomy_course::{Status, EXERCISES};
use anatomy_grade::points::CourseFile;
use anatomy_gradebook::export::{Keyed, Term, Writer};
use anatomy_gradebook::runs::{GradeCell, Run};
use anatomy_gradebook::{Gradebook, FILE_NAME};
use anatomy_report::sheet::{points, Csv, CsvCell};
use anyhow::Result;

#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;
use test_dir::TestDir;

/// Blackboard's Grade Center upload, by the students' usernames (the roster's logins).
struct Blackboard;

impl Writer for Blackboard {
    fn write(&self, _: &Gradebook, course: &CourseFile, term: &mut Term, warnings: &mut Vec<String>) -> Result<String> {
        let keyed = Keyed::by(term, |s| s.login.is_empty().then(|| "left out, with no Username".to_string()));
        let term = term.keep_graded(&keyed, warnings)?;
        let mut file = Csv::default();
        let columns =
            term.assignments.iter().map(|a| format!("{} [Total Pts: {} Score]", a.name, points(course.most(a))));
        file.record(std::iter::once("Username".to_string()).chain(columns).map(CsvCell::Text));
        for (s, standings) in &term.students {
            let grades = standings.iter().map(|st| CsvCell::Number(st.total()));
            file.record(std::iter::once(CsvCell::Text(s.login.clone())).chain(grades));
        }
        Ok(file.into_text())
    }
}

#[test]
fn a_format_of_ones_own_exports_through_the_gradebook_with_its_keys_and_its_columns() {
    let dir = TestDir::new("gradebook-format");
    let exercise = &EXERCISES[0];
    std::fs::write(dir.join("course.toml"), format!("[assignments.hw1]\nexercises = [{:?}]\n", exercise.name)).unwrap();
    let course = anatomy_gradebook::export::load_course(&dir.join("course.toml")).unwrap();
    let hw1 = course.assignment(Some("hw1")).unwrap();
    let roster = "name,id,login\nAda Lovelace,1,ada\nNo Login,2,\nGrace Hopper,3,=grace\nNot Graded,4,ng\n";
    let mut book = Gradebook::open_or_create(&dir.join(FILE_NAME)).unwrap();
    book.import_roster(&anatomy_intake::roster::read(roster.as_bytes()).unwrap()).unwrap();
    let most = course.max(exercise.name);
    let cell = |id: &str, points: f64| GradeCell {
        student: book.student(id).unwrap().key,
        exercise: exercise.name.into(),
        status: if points == most { Status::Passed } else { Status::Failed },
        mistake: None,
        message: String::new(),
        parts: None,
        points,
        max_points: most,
        handed_in: None,
        due: None,
        late_days: Some(0),
        source: None,
    };
    let run = Run {
        assignment: "hw1".into(),
        due: None,
        grader: "anatomy (a format's test)".into(),
        seed: 0,
        tier: "bubblewrap".into(),
        exercises: vec![exercise.name],
        cells: vec![cell("1", most), cell("2", most), cell("3", 0.0)],
    };
    book.record(&run).unwrap();
    let exported = book.export_with(&course, &Blackboard, Some(&hw1)).unwrap();
    let m = points(most);
    assert_eq!(
        exported.text,
        format!("\"Username\",\"hw1 [Total Pts: {m} Score]\"\n\"'=grace\",0\n\"ada\",{m}\n"),
        "by label, each text cell through the rule against formulas, as in every format"
    );
    assert_eq!(
        exported.warnings,
        [
            "left out, with no Username: 2",
            "no grade to send, so left out (an empty cell would clear a grade the platform holds): ng"
        ]
    );
}
