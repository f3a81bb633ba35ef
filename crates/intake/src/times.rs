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

/// A due date as `--due` takes it, or the one-line reason it is not one.
pub fn parse_due(text: &str) -> Result<OffsetDateTime, String> {
    parse_time(text).ok_or_else(|| format!("{text:?} is not a date: write it as RFC 3339, e.g. 2026-12-01T23:59:00Z"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_rfc_3339_or_as_nbgrader_writes_them() {
        let at = |t: &str| parse_time(t).map(|t| t.format(&time::format_description::well_known::Rfc3339).unwrap());
        assert_eq!(at("2026-12-01T23:59:00Z").as_deref(), Some("2026-12-01T23:59:00Z"));
        assert_eq!(at("2026-12-01T23:59:00+01:00").as_deref(), Some("2026-12-01T23:59:00+01:00"));
        assert_eq!(at("2026-12-01 23:59:00.250000 UTC\n").as_deref(), Some("2026-12-01T23:59:00.25Z"));
        assert_eq!(at("2026-12-01 23:59:00 UTC").as_deref(), Some("2026-12-01T23:59:00Z"));
        for wrong in ["2026-12-01 23:59:00 EST", "tomorrow", "", "2026-13-01T00:00:00Z", "2026-12-01"] {
            assert_eq!(at(wrong), None, "{wrong:?}");
        }
        assert!(parse_due("tomorrow").unwrap_err().contains("e.g. 2026-12-01T23:59:00Z"));
    }
}
