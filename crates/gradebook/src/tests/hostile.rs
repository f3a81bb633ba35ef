//! Gradebooks and entries made to hurt (issue 73): a colleague's file with a trigger that rewrites another
//! student's grade, a view that never ends, values of the wrong type, length or sign, a `sources` row
//! whose bytes are not its hash's, a write cut off before its commit; an identifier two students share in
//! a platform's file; points that are not finite, negative or -0; a due date moved past the calendar. Each
//! is refused in the line asserted, and the gradebook's rows are the same after as before.
use std::path::{Path, PathBuf};

use anatomy_course::Status;
use anatomy_intake::roster;

use super::{attention, book, course, export, run, scratch};
use crate::export::{ExportRequest, Format, MoodleId};
use crate::runs::GradeCell;
use crate::*;

/// Every row of every table, as a plain connection reads them (no trigger or view runs on a read).
fn rows(path: &Path) -> String {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut all = String::new();
    for table in
        ["students", "runs", "sources", "cells", "overrides", "extensions", "platform_columns", "late_penalties"]
    {
        let mut q = conn.prepare(&format!("SELECT * FROM {table} ORDER BY 1, 2")).unwrap();
        let n = q.column_count();
        let got =
            q.query_map([], |r| (0..n).map(|i| r.get::<_, rusqlite::types::Value>(i)).collect::<Result<Vec<_>, _>>());
        all += &format!("{table}: {:?}\n", got.unwrap().map(Result::unwrap).collect::<Vec<_>>());
    }
    all
}

/// A gradebook with a run of Ada's and Grace's, closed, and its path.
fn graded(dir: &Path) -> PathBuf {
    let mut book = book(dir);
    let cells =
        [("ada", "scaled_dot_product", Status::Passed, 5.0), ("grace", "scaled_dot_product", Status::Passed, 5.0)];
    book.record(&run(&book, "attention", &cells)).unwrap();
    book.path().to_path_buf()
}

/// `sql` run on the file by another program, as a colleague's tools could.
fn tamper(path: &Path, sql: &str) {
    rusqlite::Connection::open(path).unwrap().execute_batch(sql).unwrap();
}

fn refused(path: &Path) -> (String, String) {
    let open = Gradebook::open(path).err().map(|e| e.to_string()).unwrap_or_default();
    let read = Gradebook::read(path).err().map(|e| e.to_string()).unwrap_or_default();
    (open, read)
}

#[test]
fn a_trigger_that_rewrites_another_students_grade_is_refused_and_never_runs() {
    let dir = scratch("hostile-trigger");
    let path = graded(&dir);
    tamper(
        &path,
        "CREATE TRIGGER rewrite AFTER INSERT ON overrides BEGIN
             UPDATE cells SET points = 0 WHERE student = (SELECT id FROM students WHERE login = 'grace');
         END;",
    );
    let before = rows(&path);
    let said = format!(
        "the gradebook {} holds what the grader never makes (a trigger rewrite; gradebook schema 4): a gradebook is data, and this grader runs no trigger or view of a file's own; ask whoever gave it for the file the grader wrote, or restore it from a copy",
        path.display()
    );
    assert_eq!(refused(&path), (said.clone(), said));
    assert_eq!(rows(&path), before, "nothing changed");
    // Even past that check, a hardened connection runs no trigger: Ada's override leaves Grace's cell be.
    let mut conn = rusqlite::Connection::open(&path).unwrap();
    trust::harden(&mut conn).unwrap();
    conn.execute(
        "INSERT INTO overrides (student, exercise, points, comment, by, at) VALUES (1, 'x', 1, 'c', 'b', 'a')",
        [],
    )
    .unwrap();
    let grace: f64 = conn
        .query_row("SELECT points FROM cells JOIN students s ON s.id = student WHERE s.login = 'grace'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(grace, 5.0);
}

#[test]
fn a_view_that_never_ends_is_refused_and_a_runaway_statement_is_stopped_in_one_line() {
    let dir = scratch("hostile-view");
    let path = graded(&dir);
    let forever =
        "CREATE VIEW forever AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r;";
    tamper(&path, forever);
    let before = rows(&path);
    let started = std::time::Instant::now();
    let said = format!(
        "the gradebook {} holds what the grader never makes (a view forever; gradebook schema 4): a gradebook is data, and this grader runs no trigger or view of a file's own; ask whoever gave it for the file the grader wrote, or restore it from a copy",
        path.display()
    );
    assert_eq!(refused(&path), (said.clone(), said));
    assert!(started.elapsed().as_secs() < 10, "refused at once: {:?}", started.elapsed());
    assert_eq!(rows(&path), before);
    let mut conn = rusqlite::Connection::open(&path).unwrap();
    trust::harden(&mut conn).unwrap();
    assert!(conn.query_row("SELECT count(*) FROM forever", [], |r| r.get::<_, i64>(0)).is_err(), "no view runs");
    // A statement that never ends, on a gradebook as the grader writes it, is stopped by the watch.
    tamper(&path, "DROP VIEW forever");
    let book = Gradebook::open(&path).unwrap();
    book.watch.limit.store(5_000_000, std::sync::atomic::Ordering::Relaxed);
    let endless = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r";
    let err = book.conn().query_row(endless, [], |r| r.get::<_, i64>(0)).unwrap_err();
    assert_eq!(
        refusal(&path, err.into()).to_string(),
        format!("a statement on the gradebook {} ran far longer than any term asks and was stopped: restore it from a copy (a gradebook is one file; copy it to back it up), or ask whoever gave it for the file the grader wrote", path.display())
    );
}

#[test]
fn values_the_grader_never_writes_are_refused_naming_the_table_and_column() {
    let dir = scratch("hostile-values");
    let path = graded(&dir);
    let fix = "it is not a gradebook as the grader writes it: ask whoever gave it for the file the grader wrote, or restore it from a copy";
    for (sql, what) in [
        ("UPDATE cells SET points = -5", "-5 where the grader writes points from 0 to 1000000000 in cells.points"),
        ("UPDATE cells SET points = 9e999", "inf where the grader writes points from 0 to 1000000000 in cells.points"),
        (
            "UPDATE cells SET max_points = 'five'",
            "a value of type text where the grader writes points from 0 to 1000000000 in cells.max_points",
        ),
        (
            "UPDATE students SET sis_id = x'00ff'",
            "a value of type blob where the grader writes text of at most 65536 bytes in students.sis_id",
        ),
        (
            "UPDATE students SET name = zeroblob(100000) || ''",
            "a text of 100000 bytes where the grader writes text of at most 65536 bytes in students.name",
        ),
        (
            "UPDATE cells SET late_days = -1",
            "-1 where the grader writes a whole number from 0 to 4294967295 in cells.late_days",
        ),
        (
            "INSERT INTO overrides (student, exercise, points, comment, by, at) VALUES (1, 'x', -0.5, 'c', 'b', 'a')",
            "-0.5 where the grader writes points from 0 to 1000000000 in overrides.points",
        ),
    ] {
        let copy = dir.join("copy.sqlite");
        std::fs::copy(&path, &copy).unwrap();
        tamper(&copy, sql);
        let before = rows(&copy);
        let said = format!("the gradebook {} holds {what}: {fix}", copy.display());
        assert_eq!(refused(&copy), (said.clone(), said), "{sql}");
        assert_eq!(rows(&copy), before);
    }
    // A table the grader needs, gone ("no such table: students" said nothing of the file).
    tamper(&path, "PRAGMA foreign_keys = OFF; DROP TABLE students");
    let (open, _) = refused(&path);
    assert!(
        open.starts_with(&format!("the gradebook {} holds what the grader never makes (", path.display())),
        "{open}"
    );
    assert!(open.contains("no table students"), "{open}");
}

#[test]
fn a_sources_row_whose_bytes_are_not_its_hash_is_never_taken_as_the_graded_file() {
    let dir = scratch("hostile-sources");
    let path = graded(&dir);
    let mut book = Gradebook::open(&path).unwrap();
    let ada = book.student("ada").unwrap();
    let sha =
        book.latest_cells("attention").unwrap()[&(ada.key, "scaled_dot_product".to_string())].source.clone().unwrap();
    tamper(&path, &format!("UPDATE sources SET bytes = CAST('pub fn planted() {{}}' AS BLOB) WHERE sha256 = '{sha}'"));
    let before = rows(&path);
    assert_eq!(
        book.source(&sha).unwrap_err().to_string(),
        format!("the gradebook {} holds other bytes under the SHA-256 {sha} than the file it names: it was changed outside the grader; grade the assignment again to keep the files graded, or restore the gradebook from a copy", path.display())
    );
    assert_eq!(rows(&path), before, "a read changes nothing");
    // Grading the same file again keeps the graded bytes under their hash, not the planted ones.
    book.record(&run(&book, "attention", &[("ada", "scaled_dot_product", Status::Passed, 5.0)])).unwrap();
    assert_eq!(book.source(&sha).unwrap(), b"pub fn scaled_dot_product() { /* ada */ }");
}

#[test]
fn points_that_are_not_finite_negative_or_minus_zero_are_refused_where_they_enter() {
    let dir = scratch("hostile-points");
    let path = graded(&dir);
    let mut book = Gradebook::open(&path).unwrap();
    let ada = book.student("ada").unwrap();
    let before = rows(&path);
    for (points, shown) in
        [(f64::NAN, "NaN"), (f64::INFINITY, "inf"), (f64::NEG_INFINITY, "-inf"), (-5.0, "-5"), (-0.0, "-0")]
    {
        let err = book.set_override(&ada, "attention_head", Some(points), 5.0, "why", "lecturer").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("--points {shown}: give a number from 0 to 5, the most attention_head is worth")
        );
    }
    let mut bad = run(&book, "attention", &[("ada", "attention_head", Status::Passed, 5.0)]);
    for points in [f64::INFINITY, -1.0, f64::NAN] {
        bad.cells = vec![GradeCell { points, ..bad.cells[0].clone() }];
        assert_eq!(
            book.record(&bad).unwrap_err().to_string(),
            format!("the run of attention gives attention_head {points} of 5 points, and points are a finite number of at least 0: check the course file's points and [late] policy; nothing was recorded")
        );
    }
    assert_eq!(rows(&path), before, "nothing was written");
    // A -0 a grading gives is kept as 0, and no export writes "-0".
    bad.cells = vec![GradeCell { points: -0.0, ..bad.cells[0].clone() }];
    book.record(&bad).unwrap();
    let exported = export(&book, &course(&dir), Format::Moodle, Some("attention")).unwrap();
    assert!(!exported.text.contains("-0") && exported.text.contains(",5,\"5 of 10 points"), "{}", exported.text);
}

#[test]
fn a_due_date_moved_past_the_calendar_is_refused_in_one_line() {
    let dir = scratch("hostile-dates");
    let file = dir.join("course.toml");
    std::fs::write(
        &file,
        "[assignments.attention]\nexercises = [\"scaled_dot_product\"]\ndue = \"9999-12-30T23:59:00Z\"\n",
    )
    .unwrap();
    let course = crate::export::load_course(&file).unwrap();
    let mut book = book(&dir);
    let grace = book.student("grace").unwrap();
    let before = rows(book.path());
    for days in [2, 3_000_000, u32::MAX] {
        let err = book.extend(&grace, &attention(&course), None, Some(days), "illness", "lecturer").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("--days {days} after the due date 9999-12-30T23:59:00Z is past the year 9999: give fewer days, or the date itself with --due")
        );
    }
    assert_eq!(rows(book.path()), before, "no extension was written");
    let due = book.extend(&grace, &attention(&course), None, Some(1), "illness", "lecturer").unwrap();
    assert_eq!(anatomy_grade::points::format_time(due), "9999-12-31T23:59:00Z", "the last day still fits");
}

#[test]
fn an_identifier_two_students_share_is_left_out_of_a_platforms_file_and_named() {
    let dir = scratch("hostile-shared");
    let mut book = Gradebook::open_or_create(&dir.join(FILE_NAME)).unwrap();
    // Two imports: the second gives a newcomer Ada's login, SIS id and e-mail, each in another case.
    let header = "name,id,login,section,sis_id,email\n";
    let grace = "Grace,102,grace,Mon,S-2,grace@x.org\n";
    for students in ["Ada,101,ada,Mon,S-1,ada@x.org\n", "Adam,104,ADA,Tue,s-1,Ada@X.org\n"] {
        book.import_roster(&roster::read(format!("{header}{students}{grace}").as_bytes()).unwrap()).unwrap();
    }
    let cells = ["ada", "ADA", "grace"].map(|who| (who, "scaled_dot_product", Status::Passed, 5.0));
    book.record(&run(&book, "attention", &cells)).unwrap();
    let before = rows(book.path());
    let course = course(&dir);
    let attention = attention(&course);
    for (id, value) in [(MoodleId::Username, "ADA"), (MoodleId::IdNumber, "s-1"), (MoodleId::Email, "Ada@X.org")] {
        let request = ExportRequest {
            format: Format::Moodle,
            assignment: Some(&attention),
            identify: Some(id),
            unlimited_grades: false,
        };
        let exported = book.export(&course, request).unwrap();
        assert_eq!(
            exported.warnings,
            [format!("left out, since more than one student has the {} {value:?} (the platform's import would give each of their rows to one user): give each their own in the roster and import it again: ADA, ada", id.header())]
        );
        let lines: Vec<&str> = exported.text.lines().collect();
        assert_eq!(lines.len(), 2, "Grace's row alone: {lines:?}");
        assert!(lines[1].starts_with("\"grace") || lines[1].starts_with("\"S-2\""), "{lines:?}");
    }
    assert_eq!(rows(book.path()), before, "an export changes nothing");
    // Canvas compares its ids as numbers: 0101 is 101.
    let canvas = "Student,ID,SIS User ID,SIS Login ID,Section\n\"Lovelace, Ada\",101,S-1,ada,Mon\n\"Hopper, Grace\",102,S-2,grace,Mon\n\"Ada, Again\",0101,S-9,ada2,Tue\n";
    book.import_roster(&roster::read(canvas.as_bytes()).unwrap()).unwrap();
    book.record(&run(&book, "attention", &[("ada2", "scaled_dot_product", Status::Passed, 5.0)])).unwrap();
    let exported = export(&book, &course, Format::Canvas, Some("attention")).unwrap();
    assert!(exported.warnings.contains(&"left out, since more than one student has the Canvas ID \"101\" (the platform's import would give each of their rows to one user): give each their own in the roster and import it again: ada, ada2".to_string()), "{:?}", exported.warnings);
    assert!(!exported.text.contains("\"101\"") && !exported.text.contains("\"0101\""), "{}", exported.text);
}

#[test]
fn a_write_cut_off_before_its_commit_is_never_read_as_committed() {
    let dir = scratch("hostile-journal");
    let path = graded(&dir);
    // A read-only share (its -wal and -shm can be neither made nor opened) with no journal: read as it is, and said.
    let beside = |path: &Path, end: &str| PathBuf::from(format!("{}-{end}", path.display()));
    for end in ["wal", "shm"] {
        std::fs::create_dir(beside(&path, end)).unwrap();
    }
    let notice = Gradebook::read(&path).unwrap().notice().map(String::from);
    assert_eq!(notice, Some(format!("{} is on a share SQLite cannot write its -wal and -shm files to, and no journal beside it holds a write: read as it is (SQLite's immutable)", path.display())));
    for end in ["wal", "shm"] {
        std::fs::remove_dir(beside(&path, end)).unwrap();
    }
    // A colleague's tools keep it in rollback-journal mode, and a write of theirs is cut off mid-way: the
    // file and its journal copied while the write holds pages of both.
    tamper(&path, "PRAGMA journal_mode = DELETE");
    let cut = dir.join("cut");
    std::fs::create_dir(&cut).unwrap();
    let copy = cut.join(FILE_NAME);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA cache_size = 1; BEGIN; UPDATE students SET name = 'planted';
             INSERT INTO sources SELECT hex(randomblob(32)), randomblob(2000)
             FROM (WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 500) SELECT n FROM r);",
        )
        .unwrap();
        std::fs::copy(&path, &copy).unwrap();
        std::fs::copy(beside(&path, "journal"), beside(&copy, "journal")).unwrap();
        conn.execute_batch("ROLLBACK").unwrap();
    }
    let said = format!("the gradebook {} has a write cut off before its commit in {}-journal, which a read-only opening cannot roll back: any command that changes the gradebook (extend, override, late, roster) rolls it back first, where its folder can be written; then do this again", copy.display(), copy.display());
    let journal = std::fs::read(beside(&copy, "journal")).unwrap();
    assert_eq!(Gradebook::read(&copy).err().map(|e| e.to_string()), Some(said.clone()));
    for end in ["wal", "shm"] {
        std::fs::create_dir(beside(&copy, end)).unwrap();
    }
    assert_eq!(Gradebook::read(&copy).err().map(|e| e.to_string()), Some(said), "never immutable over a journal");
    for end in ["wal", "shm"] {
        std::fs::remove_dir(beside(&copy, end)).unwrap();
    }
    assert_eq!(std::fs::read(beside(&copy, "journal")).unwrap(), journal, "the journal is as it was");
    // Opened to be changed, SQLite rolls the write back: the last commit, whole.
    let book = Gradebook::open(&copy).unwrap();
    assert_eq!(book.student("ada").unwrap().name, "Lovelace, Ada");
    assert_eq!(book.runs().unwrap(), 1);
}
