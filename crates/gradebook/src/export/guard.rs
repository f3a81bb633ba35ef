//! What a platform's file is held to before a row of it is written: each identifier the platform keys a
//! row by belongs to one student only (two imports can give two students one login, SIS id or e-mail, and
//! the platform would give both rows to one user), and every number is a grade a platform takes (finite,
//! never negative, never -0).
use std::collections::BTreeMap;

use anyhow::{bail, Result};

use anatomy_grade::points::CourseFile;
use anatomy_report::sheet::points;

use super::Term;
use crate::roster::Student;

/// The students whose identifier (by `of`) is also another student's, as the platform compares one
/// (`same`), with why each is left out: the identifier, and the fix.
pub(super) fn shared(
    term: &Term,
    what: &str,
    of: impl Fn(&Student) -> Option<String>,
    same: impl Fn(&str) -> String,
) -> BTreeMap<i64, String> {
    let mut holders: BTreeMap<String, Vec<&Student>> = BTreeMap::new();
    for (s, _) in &term.students {
        if let Some(value) = of(s) {
            holders.entry(same(&value)).or_default().push(s);
        }
    }
    let mut why = BTreeMap::new();
    for students in holders.values().filter(|h| h.len() > 1) {
        let value = of(students[0]).unwrap_or_default();
        for s in students {
            why.insert(
                s.key,
                format!(
                    "left out, since more than one student has the {what} {value:?} (the platform's import would give each of their rows to one user): give each their own in the roster and import it again"
                ),
            );
        }
    }
    why
}

/// How Moodle compares an identifier: trimmed, and without regard to case (its database's usual collation).
pub(super) fn moodle_same(value: &str) -> String {
    value.trim().to_lowercase()
}

/// How Canvas compares its user id: trimmed, and as a number when it is one (`0101` is `101`).
pub(super) fn canvas_same(value: &str) -> String {
    let value = value.trim();
    value.parse::<u64>().map_or_else(|_| value.to_string(), |n| n.to_string())
}

/// Refuses a term whose grades or points possible are not a number a platform takes: each must be finite
/// and at least 0 (a late policy or a course file could give another), so that no file says "inf" or "-5"
/// or "0 of -0 points".
pub(super) fn numbers(course: &CourseFile, term: &Term) -> Result<()> {
    let fine = |p: f64| p.is_finite() && p + 0.0 >= 0.0;
    for a in &term.assignments {
        if !fine(course.most(a)) {
            bail!(
                "the course file gives {} {} points in all, which no platform takes: give each of its exercises finite points of at least 0",
                a.name,
                course.most(a)
            );
        }
    }
    for (s, standings) in &term.students {
        for (standing, a) in standings.iter().zip(&term.assignments) {
            let given = standing.cells.iter().filter_map(|c| c.points()).chain(standing.total());
            if let Some(p) = given.into_iter().find(|p| !fine(*p)) {
                bail!(
                    "{}'s grade in {} comes to {}, which no platform takes: check the course file's points and [late] policy, then export again",
                    s.label,
                    a.name,
                    if p.is_finite() { points(p) } else { p.to_string() }
                );
            }
        }
    }
    Ok(())
}
