//! What an instructor gives a change, checked before anything is written: the words that say why, who
//! gives it, and a due date moved by days (checked date arithmetic, so that a date past the calendar is
//! refused in one line rather than a panic).
use anyhow::{bail, Result};
use time::OffsetDateTime;

use anatomy_grade::points::format_time;

use super::MAX_WORDS;

pub(super) fn words(what: &str, text: &str) -> Result<()> {
    if text.trim().is_empty() {
        bail!("say why: give the {what} (it is kept with the change, for the audit trail)");
    }
    if text.chars().count() > MAX_WORDS || text.chars().any(|c| c.is_control() && c != '\n') {
        bail!("the {what} must be text of at most {MAX_WORDS} characters, without control characters");
    }
    Ok(())
}

/// Who made a change, checked as a comment is: a login, not a page of text.
pub(super) fn who_checked(by: &str) -> Result<()> {
    if by.chars().count() > 256 || by.chars().any(char::is_control) {
        bail!("--by must name who made the change in at most 256 characters, without control characters");
    }
    Ok(())
}

/// `days` after `due`, within the years a date is written in (to 9999): past them, refused in one line
/// that names the option and the fix, where an unchecked sum would panic.
pub fn later(due: OffsetDateTime, days: u32) -> Result<OffsetDateTime> {
    let moved = due.checked_add(time::Duration::days(days.into())).filter(|d| (0..=9999).contains(&d.year()));
    moved.ok_or_else(|| {
        anyhow::anyhow!(
            "--days {days} after the due date {} is past the year 9999: give fewer days, or the date itself with --due",
            format_time(due)
        )
    })
}
