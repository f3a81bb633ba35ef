//! The made-up Canvas course the term's exports go back to, shared by the gradebook's tests and the
//! command's (`#[path]`, beside `importers.rs`): its students and two assignments, with a score entered by
//! hand for Alan in the decoder (whom we never grade) and for Bri in the encoder.
use super::importers::{CanvasCourse, CanvasUser};

/// The course, with Canvas's test student ("Student, Test", no SIS id) logged in as `test_student_login`
/// (Canvas gives it a 40-hex login; a test that reads it as an ordinary student gives "").
pub fn canvas_course(test_student_login: &str) -> CanvasCourse {
    let user = |id, name: &str, sortable: &str, sis: &str, login: &str| CanvasUser {
        id,
        name: name.into(),
        sortable_name: sortable.into(),
        sis_user_id: sis.into(),
        login: login.into(),
    };
    CanvasCourse {
        users: vec![
            user(48999, "Test Student", "Student, Test", "", test_student_login),
            user(101, "Ada Lovelace", "Lovelace, Ada", "S-101", "ada"),
            user(102, "Grace Hopper", "Hopper, Grace", "S-102", "grace"),
            user(103, "Eve", "=HYPERLINK(\"http://example.com\"), Eve", "S-103", "eve"),
            user(104, "Brígida Núñez", "Núñez \"Bri\", Brígida", "", "bri"),
            user(105, "Alan Turing", "Turing, Alan", "S-105", "alan"),
        ],
        assignments: vec![(48213, "Encoder".into()), (48214, "Homework 2: Decoder".into())],
        scores: [((105, 48214), "15".to_string()), ((104, 48213), "9".to_string())].into(),
    }
}
