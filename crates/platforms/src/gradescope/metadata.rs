//! What the course's late policy reads of Gradescope's `submission_metadata.json`: when the submission
//! was made (`created_at`) and when it was due (`assignment.due_date`). Each is validated: a value the
//! policy cannot read (a number, a word, nothing) refuses the grading, which the student sees in the
//! results, so that a submission is never taken as on time because its dates could not be read.
use std::path::Path;

use anatomy_intake::files::{self, Limit};
use anatomy_intake::json::{Lenient, Scalar};
use anyhow::{anyhow, bail, Result};
use serde::Deserialize;

use anatomy_grade::points::{CourseFile, Late};

/// The file Gradescope writes beside the submission.
pub const FILE: &str = "submission_metadata.json";

/// The largest metadata file read: Gradescope puts each earlier submission's whole results in it
/// (`previous_submissions`), a few hundred kilobytes each for this course, so 64 MiB holds hundreds; only
/// the two dates are kept of it.
pub const MAX_METADATA: u64 = 64 << 20;

/// What to do about a metadata file the policy cannot read.
const FIX: &str = "Gradescope writes it for every submission, with its dates as RFC 3339 text \
                   (2026-03-01T12:00:00-07:00): grade the submission again on Gradescope, or remove [late] from \
                   the course file";

/// The submission's lateness under the course's policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lateness {
    /// The course has no late policy: the metadata is not read.
    NoPolicy,
    /// Gradescope gives the assignment no due date (`null`): nothing to be late for, and the results say so.
    NoDueDate,
    /// Whole days late (rounded up; 0 on time), with the policy that counts them.
    Days(u32, Late),
}

impl Lateness {
    /// The days and policy that the results count, if any.
    pub fn counted(self) -> Option<(u32, Late)> {
        match self {
            Lateness::Days(days, policy) => Some((days, policy)),
            _ => None,
        }
    }

    /// What the results say beside the points when the policy could not apply.
    pub fn note(self) -> Option<&'static str> {
        (self == Lateness::NoDueDate).then_some(
            "Gradescope gives this assignment no due date, so the course's late policy was not applied: every \
             point is kept.",
        )
    }
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(default)]
    created_at: Scalar,
    #[serde(default)]
    assignment: Lenient<Assignment>,
}

#[derive(Deserialize)]
struct Assignment {
    #[serde(default)]
    due_date: Scalar,
}

/// The lateness of the submission under `root`, read from `root/submission_metadata.json` when the
/// course has a late policy; a file or a date it cannot read is a one-line error naming the file.
pub fn lateness(root: &Path, course: &CourseFile) -> Result<Lateness> {
    let Some(policy) = course.late else { return Ok(Lateness::NoPolicy) };
    let path = root.join(FILE);
    let shown = path.display();
    let limit = Limit { max: MAX_METADATA, kind: "Gradescope's submission metadata", fix: FIX };
    let bytes = files::read(&path, limit).map_err(|why| anyhow!("{why} (the course's [late] policy reads it)"))?;
    let meta: Metadata = serde_json::from_slice(&bytes)
        .map_err(|e| anyhow!("{shown} is not Gradescope's submission metadata ({e}): {FIX}"))?;
    let date = |value: &Scalar, key: &str| match value.text().and_then(anatomy_intake::times::parse_time) {
        Some(t) => Ok(t),
        None => Err(anyhow!(
            "{shown}: {key} is {}, not a date, so the submission's lateness is unknown: {FIX}",
            value.shown()
        )),
    };
    let created = date(&meta.created_at, "created_at")?;
    let Some(assignment) = meta.assignment.0 else {
        bail!(
            "{shown}: assignment is {}, not Gradescope's object with its due_date: {FIX}",
            "missing or not an object"
        );
    };
    if assignment.due_date == Scalar::Null {
        return Ok(Lateness::NoDueDate);
    }
    let due = date(&assignment.due_date, "assignment.due_date")?;
    Ok(Lateness::Days(Late::days(created, due), policy))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::helpers::scratch;

    fn course(late: Option<Late>) -> CourseFile {
        CourseFile { points: Default::default(), late, assignments: vec![] }
    }

    #[test]
    fn lateness_is_read_from_the_submissions_metadata_under_a_late_policy_only() {
        let root = scratch("gradescope-metadata");
        let meta = |created: &str, due: &str| {
            let text = format!("{{\"created_at\": {created}, \"assignment\": {{\"due_date\": {due}}}, \"previous_submissions\": [{{\"results\": {{}}}}]}}");
            std::fs::write(root.join(FILE), text).unwrap();
        };
        meta("\"2026-03-02T13:00:00.365935-07:00\"", "\"2026-03-01T12:00:00-07:00\"");
        assert_eq!(lateness(&root, &course(None)).unwrap(), Lateness::NoPolicy);
        let policy = Late { penalty_per_day: 0.2, max_days: 2 };
        let late = course(Some(policy));
        assert_eq!(lateness(&root, &late).unwrap(), Lateness::Days(2, policy), "25 hours late: two days begun");
        meta("\"2026-03-01T11:59:59Z\"", "\"2026-03-01T12:00:00Z\"");
        assert_eq!(lateness(&root, &late).unwrap(), Lateness::Days(0, policy));
        meta("\"2026-03-01T11:59:59Z\"", "null");
        assert_eq!(lateness(&root, &late).unwrap(), Lateness::NoDueDate);
        assert!(Lateness::NoDueDate.note().unwrap().contains("late policy was not applied"));
        assert_eq!((Lateness::Days(0, policy).note(), Lateness::NoDueDate.counted()), (None, None));
    }

    #[test]
    fn a_date_the_policy_cannot_read_is_refused_naming_the_file_and_the_value_never_taken_as_on_time() {
        let root = scratch("gradescope-bad-metadata");
        let path = root.join(FILE);
        let late = course(Some(Late { penalty_per_day: 0.1, max_days: 5 }));
        let refusal = |text: &str| {
            std::fs::write(&path, text).unwrap();
            format!("{:#}", lateness(&root, &late).unwrap_err())
        };
        let due = r#""assignment": {"due_date": "2026-03-01T12:00:00Z"}"#;
        for (created, said) in [
            ("12345", "the number 12345"),
            ("1.7e9", "the number 1700000000"),
            ("\"soon\"", "\"soon\""),
            ("null", "null"),
            ("true", "the boolean true"),
            ("{\"at\": 1}", "an object"),
            ("[\"2026-03-01T12:00:00Z\"]", "a list"),
        ] {
            assert_eq!(
                refusal(&format!("{{\"created_at\": {created}, {due}}}")),
                format!(
                    "{}: created_at is {said}, not a date, so the submission's lateness is unknown: {FIX}",
                    path.display()
                )
            );
        }
        assert_eq!(
            refusal(&format!("{{{due}}}")),
            format!(
                "{}: created_at is missing, not a date, so the submission's lateness is unknown: {FIX}",
                path.display()
            )
        );
        let created = r#""created_at": "2026-03-02T12:00:00Z""#;
        for (assignment, said) in
            [(r#"{"due_date": 1}"#, "the number 1"), (r#"{}"#, "missing"), (r#"{"due_date": "Friday"}"#, "\"Friday\"")]
        {
            assert_eq!(
                refusal(&format!("{{{created}, \"assignment\": {assignment}}}")),
                format!(
                    "{}: assignment.due_date is {said}, not a date, so the submission's lateness is unknown: {FIX}",
                    path.display()
                )
            );
        }
        for assignment in ["", r#", "assignment": 7"#] {
            assert_eq!(
                refusal(&format!("{{{created}{assignment}}}")),
                format!(
                    "{}: assignment is missing or not an object, not Gradescope's object with its due_date: {FIX}",
                    path.display()
                )
            );
        }
        let not_json = refusal("{");
        assert!(
            not_json.starts_with(&format!("{} is not Gradescope's submission metadata (EOF", path.display())),
            "{not_json}"
        );
        let twice = refusal(&format!("{{{created}, {created}, {due}}}"));
        assert!(twice.contains("(duplicate field `created_at`"), "{twice}");
        std::fs::remove_file(&path).unwrap();
        let missing = format!("{:#}", lateness(&root, &late).unwrap_err());
        assert!(
            missing.starts_with(&format!("cannot read {}: ", path.display()))
                && missing.ends_with("(the course's [late] policy reads it)"),
            "{missing}"
        );
        // Sparse: 2 GiB that cost no disk, refused before a byte is read.
        std::fs::File::create(&path).unwrap().set_len(2 << 30).unwrap();
        assert_eq!(
            format!("{:#}", lateness(&root, &late).unwrap_err()),
            format!("{} is 2 GiB, more than the 64 MiB Gradescope's submission metadata may be: {FIX} (the course's [late] policy reads it)", path.display())
        );
    }

    #[test]
    fn points_the_course_file_cannot_give_never_reach_the_results_only_the_refusal_does() {
        let root = scratch("gradescope-course-points");
        let file = root.join("course.toml");
        for (value, said) in [("-0.0", "-0.0"), ("inf", "inf"), ("-5", "-5.0")] {
            std::fs::write(&file, format!("[points]\nlayer_norm = {value}\n")).unwrap();
            let chosen = [anatomy_course::EXERCISES.iter().find(|e| e.name == "layer_norm").unwrap()];
            let course = anatomy_gradebook::export::load_course(&file);
            let (written, score) = crate::run(&root, crate::Platform::Gradescope, &chosen, course).unwrap();
            assert_eq!((written, score), (root.join("results/results.json"), 0.0.into()));
            let results: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(root.join("results/results.json")).unwrap()).unwrap();
            let refusal = format!(
                "{}: the points of layer_norm are {said}: give a number of 0 or more, such as layer_norm = 5",
                file.display()
            );
            assert_eq!(results["tests"][0]["output"], format!("~~~~text\n{refusal}\n~~~~\n"));
            assert_eq!(results["tests"][0]["max_score"], 1.0, "{results}");
            let text = results.to_string();
            assert!(!text.contains("of -0") && !text.contains("inf points") && !text.contains("of -5"), "{text}");
            let mut entries: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name()).collect();
            entries.sort();
            assert_eq!(entries, ["course.toml", "results"], "nothing but the results written");
        }
    }
}
