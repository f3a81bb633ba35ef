//! A hand-in's time as nbgrader writes it (`timestamp.txt`) or RFC 3339: read from at most 256 bytes (see
//! the exercises' `handin::handed_in`) by `time`'s parser, which loops over a fixed format and recurses
//! into nothing the student writes.
use time::OffsetDateTime;

/// A point in time as a due date or a hand-in time is written: RFC 3339 (`2026-12-01T23:59:00Z`), or as
/// nbgrader's `timestamp.txt` holds it (`2026-12-01 23:59:00.123456 UTC`, the fraction optional).
pub fn parse_time(text: &str) -> Option<OffsetDateTime> {
    let text = text.trim();
    let rfc3339 = |t: &str| OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok();
    rfc3339(text).or_else(|| {
        let (moment, zone) = text.rsplit_once(' ')?;
        (zone == "UTC").then(|| rfc3339(&format!("{}Z", moment.replacen(' ', "T", 1))))?
    })
}
