//! A CSV as every reader sees it, for the tests of what the grader writes as CSV (the grade sheet's, in
//! crates/report/src/sheet.rs, and the gradebook's exports, crates/gradebook/src/tests.rs, include this
//! file): the `csv` crate's reading, checked against the records as written.

/// The records of a CSV as written: each field's text (its quotes undone) and whether it was quoted.
fn raw_records(text: &str) -> Vec<Vec<(String, bool)>> {
    let (mut records, mut record, mut field, mut quoted) = (Vec::new(), Vec::new(), String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if field.is_empty() && !quoted => {
                quoted = true;
                loop {
                    match chars.next().expect("a closing quote") {
                        '"' if chars.peek() == Some(&'"') => field.push(chars.next().unwrap()),
                        '"' => break,
                        c => field.push(c),
                    }
                }
            }
            ',' | '\n' => {
                record.push((std::mem::take(&mut field), std::mem::replace(&mut quoted, false)));
                if c == '\n' {
                    records.push(std::mem::take(&mut record));
                }
            }
            c => {
                assert!(!quoted, "{c:?} after a closing quote in {text}");
                field.push(c);
            }
        }
    }
    assert!(record.is_empty() && field.is_empty(), "the last record has no end: {text}");
    records
}

/// A CSV as every reader sees it, returned as the `csv` crate reads it: the same records as written, each
/// of as many cells as the header; every text cell quoted, every cell of a `numbers` column (below the
/// header, Canvas's `Points Possible` too) bare and a number or empty; and no piece of the file, cut at
/// every `,`, `;`, tab and line break as a spreadsheet that ignores quotes would cut it, that starts with a
/// formula's character.
pub fn read_back(text: &str, numbers: &[usize]) -> Vec<Vec<String>> {
    let read: Vec<Vec<String>> = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    let raw = raw_records(text);
    assert_eq!(raw.len(), read.len(), "{text}");
    let header_len = raw.first().map_or(0, Vec::len);
    for (n, (raw, read)) in raw.iter().zip(&read).enumerate() {
        assert_eq!((read.len(), raw.len()), (header_len, header_len), "record {n} of {text}");
        for (i, (field, quoted)) in raw.iter().enumerate() {
            assert_eq!(field, &read[i], "record {n} of {text}");
            if n > 0 && numbers.contains(&i) {
                assert!(!quoted && (field.is_empty() || field.parse::<f64>().is_ok()), "not a number: {field:?}");
            } else {
                assert!(*quoted || field.is_empty(), "a text cell not quoted: {field:?} in {text}");
            }
        }
    }
    for piece in text.split([',', ';', '\t', '\r', '\n']) {
        let shown = piece.trim_start_matches(|c: char| c.is_whitespace() || c == '"');
        assert!(!shown.starts_with(['=', '+', '-', '@']), "a formula: {piece:?} in {text}");
    }
    read
}
