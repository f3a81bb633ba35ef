//! The roster reader's tests: both platforms' exports, every refusal, and Canvas's download names.
use super::*;

const CANVAS: &str = "Student,ID,SIS User ID,SIS Login ID,Section,Attention (1234),Decoder (1235),Current Score\n\
    \"    Points Possible\",,,,,15,40,\n\
    \"Lovelace, Ada\",101,S-1,ada,Mon,,,\n\
    \"=HYPERLINK(\"\"x\"\"), Eve\",102,S-2,eve,Tue,3,,\n";

#[test]
fn canvas_s_export_gives_its_students_and_assignment_columns_and_skips_points_possible() {
    let roster = read(CANVAS.as_bytes()).unwrap();
    assert_eq!(roster.origin, Origin::Canvas);
    assert_eq!(roster.assignment_columns, ["Attention (1234)", "Decoder (1235)"]);
    let ids: Vec<(&str, &str, &str, &str)> = roster
        .students
        .iter()
        .map(|s| (s.name.as_str(), s.id.as_str(), s.login.as_str(), s.section.as_str()))
        .collect();
    assert_eq!(ids, [("Lovelace, Ada", "101", "ada", "Mon"), ("=HYPERLINK(\"x\"), Eve", "102", "eve", "Tue")]);
    // A BOM, as Excel writes one, changes nothing.
    assert_eq!(read(format!("\u{feff}{CANVAS}").as_bytes()).unwrap(), roster);
}

#[test]
fn a_plain_roster_in_any_column_order_and_every_refusal_in_one_line() {
    let roster = read(b"login,NAME,id\nada,Ada Lovelace,7\nbob,Bob,8\n").unwrap();
    assert_eq!(
        (roster.origin, roster.students[1].login.as_str(), roster.students[1].section.as_str()),
        (Origin::Plain, "bob", "")
    );
    // An invisible character in a name is written out, never passed on.
    let shown = read("name,id\n\"Ada\u{202e}evil\",1\n".as_bytes()).unwrap();
    assert_eq!(shown.students[0].name, "Ada\\u{202E}evil");
    for (bytes, says) in [
        (&b""[..], "empty"),
        (b"who,what\nada,1\n", "neither Canvas"),
        (b"name,id\nAda,\n", "line 2: the id is empty"),
        (b"name,id\nAda,1\nBob,1\n", "\"1\" twice"),
        (b"name,id,login\nAda,1,x\nBob,2,x\n", "\"x\" twice"),
        (b"name,id,sis_id\nAda,1,S7\nBob,2,S7\n", "\"S7\" twice"),
        (b"name,id\n\xff,1\n", "not UTF-8"),
        (b"name,id\n", "no student"),
    ] {
        let error = read(bytes).unwrap_err();
        assert!(error.contains(says) && !error.contains('\n'), "{error}");
    }
    let long = format!("name,id\n{},1\n", "a".repeat(MAX_FIELD + 1));
    assert!(read(long.as_bytes()).unwrap_err().contains("over 256 characters"));
    let many = format!("name,id\n{}", (0..=MAX_STUDENTS).map(|i| format!("s,{i}\n")).collect::<String>());
    assert!(read(many.as_bytes()).unwrap_err().contains("over 20000 students"));
}

#[test]
fn canvas_s_test_student_and_column_headers_are_told_apart_and_a_plain_roster_may_give_e_mails() {
    let text = "\u{feff}Student,ID,SIS User ID,SIS Login ID,Section,Homework 2: Decoder (48214),Current Score\r\n\
        \"    Points Possible\",,,,,20,\r\n\
        ,,,,,Manual Posting,\r\n\
        \"Student, Test\",999,,0f3c9a7e5b1d2c4e6f8a0b2c4d6e8f0a1b3c5d7e,Monday and Tuesday,,\r\n\
        \"Student, Test\",998,,,Monday,,\r\n\
        \"Student, Test\",997,S-9,,Monday,,\r\n\
        \"Test Student\",996,,tester,Monday,,\r\n\
        \"Student, Test\",995,,0F3C9A7E5B1D2C4E6F8A0B2C4D6E8F0A1B3C5D7E,Monday,,\r\n\
        \"Student, Test\",994,,0f3c9a7e5b1d2c4e6f8a0b2c4d6e8f0a1b3c5d7,Monday,,\r\n";
    let roster = read(text.as_bytes()).unwrap();
    assert_eq!(roster.assignment_columns, ["Homework 2: Decoder (48214)"]);
    let tests: Vec<bool> = roster.students.iter().map(|s| s.is_canvas_test_student(roster.origin)).collect();
    assert_eq!(
        tests,
        [true, true, false, false, false, false],
        "Canvas's own (its hex login, or none) is the test student; one with an SIS id or a login of their own is a real one, whatever the name"
    );
    assert!(!roster.students[0].is_canvas_test_student(Origin::Plain), "only Canvas has one");
    assert_eq!(canvas_column("Homework 2: Decoder (48214)"), Some(("Homework 2: Decoder", "48214")));
    assert_eq!(canvas_column("Quiz (part 2) (7)"), Some(("Quiz (part 2)", "7")));
    for not in ["Current Score", "Quiz ()", "Quiz (x1)", " (12)", "Quiz(12)"] {
        assert_eq!(canvas_column(not), None, "{not}");
    }
    let plain = read(b"name,id,email,sis_id\nAda,7,ada@example.org,\nBob,8,,S-8\n").unwrap();
    let fields: Vec<(&str, &str)> = plain.students.iter().map(|s| (s.email.as_str(), s.sis_id.as_str())).collect();
    assert_eq!(fields, [("ada@example.org", ""), ("", "S-8")]);
    assert!(read(b"name,id,email\nAda,7,a@x\nBob,8,a@x\n").unwrap_err().contains("\"a@x\" twice"));
}

#[test]
fn a_canvas_download_name_gives_the_id_canvas_wrote_whatever_the_student_named_the_file() {
    let d = canvas_download("lovelaceada_LATE_101_9001_layer_norm-1.rs").unwrap();
    assert_eq!(d, Download { user_id: "101".into(), late: true, file: "layer_norm.rs".into(), resubmission: 1 });
    let d = canvas_download("lovelaceada_101_9001_homework-cross-attention.ipynb").unwrap();
    assert_eq!((d.late, d.file.as_str()), (false, "homework-cross-attention.ipynb"));
    // A student's file named like another student's download keeps the student's own id.
    let d = canvas_download("evehacker_102_9002_lovelaceada_101_9001_layer_norm.rs").unwrap();
    assert_eq!((d.user_id.as_str(), d.file.as_str()), ("102", "lovelaceada_101_9001_layer_norm.rs"));
    for not in ["layer_norm.rs", "ada_101_layer_norm.rs", "_101_9001_x.rs", "a1_101_9001_x.rs", "ada_101_9001_"] {
        assert_eq!(canvas_download(not), None, "{not}");
    }
    assert_eq!(without_resubmission_number("attention-head.rs"), ("attention-head.rs".into(), 0));
    // Found by fuzzing: a file named "." once came out as no name at all.
    assert_eq!(canvas_download("laca_LITE_0_0_.").map(|d| d.file).as_deref(), Some("."));
    assert_eq!(without_resubmission_number(".rs"), (".rs".into(), 0));
    assert_eq!(without_resubmission_number("notes-12.rs"), ("notes.rs".into(), 12));
}

#[test]
fn an_unbalanced_quote_is_refused_at_the_line_it_opens_never_swallowing_the_students_after_it() {
    let refusal = |line: usize| {
        format!(
            "roster line {line}: a field there opens a quote (\") that the line does not close, so it would take the \
             lines after it into that one field: close the quote on line {line}, or remove it"
        )
    };
    // Once read as one student, "1 added", the others gone; or as a student with no id.
    for (text, line) in [
        ("name,id,login\nAda,1,\"ada\nBob,2,bob\nCarl,3,carl\n", 2),
        ("name,id,login\nAda,1,ada\n\"Bob,2,bob\nCarl,3,carl\n", 3),
        ("name,id,login\r\nAda,1,ada\r\nBob,\"2\r\nCarl,3,carl\r\n", 3),
        // Closed, but on a later line: a login or an id holding a line break.
        ("name,id,login\nAda,1,\"ada\nlovelace\"\nBob,2,bob\n", 2),
        ("name,id\nAda,\"1\n\"\n", 2),
        // Left open on the last line, with nothing after it to swallow.
        ("name,id\nAda,1\nBob,\"2", 3),
        ("\u{feff}\"name,id\nAda,1\n", 1),
    ] {
        assert_eq!(read(text.as_bytes()).unwrap_err(), refusal(line), "{text:?}");
    }
    // Quotes that close on their line, a doubled quote inside, and a quote inside an unquoted field.
    let fine =
        read(b"name,id,login\n\"Lovelace, Ada\",1,\"a\"\"da\"\nBob \"B\" Smith,2,bob\n\n\"Carl\",3,carl\n").unwrap();
    let read_back: Vec<(&str, &str)> = fine.students.iter().map(|s| (s.name.as_str(), s.login.as_str())).collect();
    assert_eq!(read_back, [("Lovelace, Ada", "a\"da"), ("Bob \"B\" Smith", "bob"), ("Carl", "carl")]);
    assert_eq!(unclosed_quote("a,\"b\"\"\n\",c"), Some(1), "the doubled quote does not close it");
    assert_eq!(unclosed_quote("a,\"b\"x\n\"c\""), None, "closed, then text: no longer quoted");
}

#[test]
fn a_roster_file_is_read_within_its_limit_and_every_refusal_names_it() {
    let dir = crate::test_dir::TestDir::new("intake-roster");
    let file = dir.join("class.csv");
    std::fs::write(&file, "name,id,login\nAda,1,ada\n\"Bob,2,bob\nCarl,3,carl\n").unwrap();
    assert_eq!(
        read_file(&file).unwrap_err(),
        format!(
            "{}: roster line 3: a field there opens a quote (\") that the line does not close, so it would take the \
             lines after it into that one field: close the quote on line 3, or remove it",
            file.display()
        )
    );
    std::fs::write(&file, "name,id\nAda,1\n\nBob,\n").unwrap();
    assert_eq!(
        read_file(&file).unwrap_err(),
        format!("{}: roster line 4: the id is empty: every student needs the LMS's id", file.display()),
        "the line as the file numbers it, a blank line counted"
    );
    // Sparse: past the limit, refused before a byte is read.
    std::fs::File::create(&file).unwrap().set_len(2 << 30).unwrap();
    assert_eq!(
        read_file(&file).unwrap_err(),
        format!(
            "{} is 2 GiB, more than the 16 MiB a roster may be: export the class list alone, as CSV",
            file.display()
        )
    );
    std::fs::write(&file, "name,id\nAda,1\n").unwrap();
    assert_eq!(read_file(&file).unwrap().students.len(), 1);
}
