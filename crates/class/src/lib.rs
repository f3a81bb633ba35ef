//! # A class, graded then reported
//!
//! A folder of student folders in, one [`Row`] per student out — each student's files compiled and run in
//! a sandbox of their own by the grader (`anatomy_grade`) — then the grade sheet's outputs and the class
//! report (`anatomy_report`). One student's folder goes the same way ([`grade_student`]): the course
//! platforms (`anatomy_platforms`) grade a submission with it, so that a class and a platform's single
//! submission are graded by one path. The commands of a class are here whole, each an options struct in and
//! what it prints out: `exercises grade` ([`command::grade`]), `exercises report` ([`command::remake_report`]),
//! `exercises similarity` ([`similar::compare`]) and `exercises check` ([`check::check`]); the command line
//! parses their flags, adds a progress bar and prints.
use std::path::Path;

use anyhow::{bail, Context, Result};
use time::OffsetDateTime;

use anatomy_course::write_whole;
use anatomy_course::{find, Exercise, Outcome, EXERCISES};
use anatomy_grade::grading;
use anatomy_grade::handin::{students, HandIn};
use anatomy_grade::points::CourseFile;
use anatomy_grade::sandbox::{Limits, Tier};
use anatomy_gradebook::matching::Matched;
use anatomy_gradebook::runs::Run;
use anatomy_gradebook::Gradebook;
use anatomy_report::sheet::{feedback_files, Extension, Row, Sheet};
use anatomy_report::{report, similarity};

pub mod check;
pub mod command;
pub mod similar;

/// The exercises `--only` names, or all of them in course order.
pub fn chosen(only: &[String]) -> Result<Vec<&'static Exercise>> {
    match only.is_empty() {
        true => Ok(EXERCISES.iter().collect()),
        false => only.iter().map(|n| find(n)).collect(),
    }
}

/// What a class is graded on.
pub struct Class {
    pub chosen: Vec<&'static Exercise>,
    pub course: CourseFile,
    pub tier: Tier,
    /// What each student's code may use (time, memory, output, disk; the compiler's time and memory).
    pub limits: Limits,
    /// The due date, for the course's late policy: a student whose folder says they handed in later
    /// (nbgrader's `timestamp.txt`) keeps the share of the points the policy gives.
    pub due: Option<OffsetDateTime>,
}

/// A graded class: the rows of the students graded, in order, and — when the grader itself failed (not a
/// student's file: a full disk, say) — why, with how many students it left ungraded.
pub struct GradedClass {
    pub rows: Vec<Row>,
    pub failure: Option<anyhow::Error>,
    pub students: usize,
    /// Per row, the bytes graded for each exercise (or why the file was refused).
    pub sources: Vec<Vec<grading::Source>>,
    /// The run's seed and the grader that graded, for the gradebook.
    pub seed: i64,
    pub grader: String,
}

/// One student's hand-in, to be graded under this label, with their extension if they have one.
pub struct HandedIn {
    pub label: String,
    pub hand_in: HandIn,
    pub extension: Option<Extension>,
}

impl Class {
    /// The grade sheet that turns this class's rows into text.
    pub fn sheet(&self) -> Sheet<'_> {
        Sheet { chosen: &self.chosen, course: &self.course, tier: &self.tier, due: self.due }
    }

    /// Grades every student under `submissions`; `progress(graded, of)` is told after each one. A file a
    /// student did not hand in is graded as the untouched stub.
    pub fn grade(&self, submissions: &Path, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<GradedClass> {
        let hand_ins = students(submissions)?
            .into_iter()
            .map(|(label, folder)| HandedIn { label, hand_in: HandIn::Folder(folder), extension: None })
            .collect();
        self.grade_hand_ins(hand_ins, progress)
    }

    /// Grades each student's hand-in, a folder or a download's files, in the order given.
    pub fn grade_hand_ins(
        &self,
        hand_ins: Vec<HandedIn>,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<GradedClass> {
        if self.due.is_some() && self.course.late.is_none() {
            bail!("--due needs a late policy: add a [late] table (penalty_per_day, max_days) to the course file");
        }
        let units = hand_ins
            .iter()
            .map(|h| grading::hand_in_unit(&h.hand_in, Some(&h.label), &self.chosen))
            .collect::<Result<Vec<_>>>()?;
        let total = units.len();
        let graded = grade_units(units, &self.tier, self.limits, &|n| progress(n, total))?;
        // The students graded before a failure of the grader are kept all the same.
        let (rows, sources) = hand_ins
            .into_iter()
            .zip(graded.units)
            .zip(graded.sources)
            .filter_map(|((h, outcomes), sources)| {
                let row = Row {
                    student: h.label,
                    outcomes: outcomes?,
                    handed_in: h.hand_in.handed_in(),
                    extension: h.extension,
                };
                Some((row, sources))
            })
            .unzip();
        Ok(GradedClass {
            rows,
            failure: graded.failure,
            students: total,
            sources,
            seed: graded.seed,
            grader: graded.grader,
        })
    }

    /// Writes the grade sheet's CSV and one feedback file per student, each whole, where asked.
    pub fn write(&self, rows: &[Row], csv: Option<&Path>, feedback: Option<&Path>) -> Result<()> {
        let sheet = self.sheet();
        if let Some(path) = csv {
            write_whole(path, &sheet.csv(rows)?)?;
        }
        if let Some(dir) = feedback {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            for (row, name) in rows.iter().zip(feedback_files(rows)) {
                write_whole(&dir.join(name), &sheet.feedback(row))?;
            }
        }
        Ok(())
    }
}

impl GradedClass {
    /// The grader's own failure, if it had one, saying how many students it left ungraded: what ends the
    /// command in failure once the graded rows are written.
    pub fn finish(self) -> Result<()> {
        let (left, all) = (self.students - self.rows.len(), self.students);
        match self.failure {
            None => Ok(()),
            Some(failure) => Err(failure.context(format!(
                "the grader stopped with {left} of {all} students not graded (the rows above are the graded ones)"
            ))),
        }
    }
}

impl Class {
    /// Writes the class report into `dir` ([`report::write`]), from the rows as the JSON lines keep them
    /// (so that `anatomy exercises report` makes the same report from those lines), with the similarity
    /// pairs of the class folder `similar_in` when given.
    pub fn report(&self, dir: &Path, rows: &[Row], similar_in: Option<&Path>) -> Result<report::Summary> {
        let sheet = self.sheet();
        let kept = rows.iter().map(|r| sheet.line(r).row(&self.chosen)).collect::<Result<Vec<_>>>()?;
        let pairs = match similar_in {
            Some(class) => Some(
                similarity::report::compare(&students(class)?, &self.chosen, anatomy_intake::similarity::THRESHOLD)?
                    .pairs,
            ),
            None => None,
        };
        report::write(dir, &sheet, &kept, pairs.as_deref())
    }
}

/// A class graded into the gradebook, as [`Class::grade_into`] gives it.
pub struct RecordedClass {
    pub graded: GradedClass,
    /// The run's number in the gradebook; none when the grader stopped (nothing is recorded then).
    pub run: Option<i64>,
}

impl Class {
    /// Grades an assignment's hand-ins, as matched to the gradebook's roster, into the gradebook (`only`:
    /// just these students, by login, id or label), each student held to their extension, then recorded as one run
    /// — all of its cells and the bytes graded, in one transaction — once every student is graded.
    pub fn grade_into(
        &self,
        book: &mut Gradebook,
        assignment: &str,
        matched: &Matched,
        only: &[String],
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<RecordedClass> {
        let wanted = only.iter().map(|who| book.student(who).map(|s| s.key)).collect::<Result<Vec<_>>>()?;
        let extensions = book.extensions(assignment)?;
        let mut keys = Vec::new();
        let mut hand_ins = Vec::new();
        for (student, hand_in) in &matched.found {
            if wanted.is_empty() || wanted.contains(&student.key) {
                keys.push(student.key);
                let extension = extensions.get(&student.key).cloned();
                hand_ins.push(HandedIn { label: student.label.clone(), hand_in: hand_in.clone(), extension });
            }
        }
        if let Some((_, who)) = wanted.iter().zip(only).find(|(k, _)| !keys.contains(k)) {
            bail!("{who} has no hand-in among those matched: nothing to regrade (cargo anatomy exercises gradebook match lists them)");
        }
        let graded = self.grade_hand_ins(hand_ins, progress)?;
        let run = match graded.failure {
            Some(_) => None,
            None => {
                let sheet = self.sheet();
                let students: Vec<(i64, &Row, &[grading::Source])> = keys
                    .iter()
                    .zip(&graded.rows)
                    .zip(&graded.sources)
                    .map(|((k, r), s)| (*k, r, s.as_slice()))
                    .collect();
                Some(book.record(&Run::of(assignment, &sheet, &students, graded.seed, &graded.grader))?)
            }
        };
        Ok(RecordedClass { graded, run })
    }
}

/// Says now, before anything is graded, when an output's folder is missing: nothing is written until the
/// grades are known, and an hour of grading should not end in "no such folder".
pub fn check_output_folder(flag: &str, path: Option<&Path>) -> Result<()> {
    if let Some(folder) = path.and_then(Path::parent).filter(|f| !f.as_os_str().is_empty()) {
        if !folder.is_dir() {
            bail!("{flag}: the folder {} does not exist", folder.display());
        }
    }
    Ok(())
}

/// Grades one student's folder (`FOLDER/exercises/NAME.rs` or `FOLDER/NAME.rs`; a file not handed in is the
/// untouched stub) in `tier`, as [`Class::grade`] grades each student of a class.
pub fn grade_student(folder: &Path, chosen: &[&'static Exercise], tier: &Tier) -> Result<Vec<Outcome>> {
    let unit = grading::student_unit(folder, None, chosen)?;
    Ok(grade_units(vec![unit], tier, Limits::default(), &|_| {})?.all()?.remove(0))
}

/// The one call a class and a single student are graded by.
fn grade_units(
    units: Vec<Vec<grading::Submission>>,
    tier: &Tier,
    limits: Limits,
    done: &(dyn Fn(usize) + Sync),
) -> Result<grading::Graded> {
    // The grader builds the project it finds from the folder it runs in (its libraries, the probes' recipe):
    // run from inside a student's checkout, that would be the student's build, outside any sandbox.
    let (here, own) = (anatomy_course::project_root(), anatomy_course::program_root());
    if let Some(own) = own.filter(|own| *own != here) {
        bail!(
            "this grader belongs to {} but runs in {}: grade a class from the grader's own checkout (cd {})",
            own.display(),
            here.display(),
            own.display()
        );
    }
    let options = grading::Options { tier: tier.clone(), limits, ..grading::Options::default() };
    grading::grade_units(units, &options, done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chosen_exercises_are_all_in_course_order_or_the_ones_named_and_an_unknown_name_says_the_names() {
        let all: Vec<&str> = chosen(&[]).unwrap().iter().map(|e| e.name).collect();
        assert_eq!(all, EXERCISES.iter().map(|e| e.name).collect::<Vec<_>>());
        let two = chosen(&["causal_mask".into(), "layer_norm".into()]).unwrap();
        assert_eq!(two.iter().map(|e| e.name).collect::<Vec<_>>(), ["causal_mask", "layer_norm"], "as asked");
        let unknown = chosen(&["softmax".into()]).unwrap_err().to_string();
        assert!(unknown.contains("no exercise named \"softmax\"") && unknown.contains("layer_norm"), "{unknown}");
    }

    fn nothing_graded() -> GradedClass {
        GradedClass {
            rows: Vec::new(),
            failure: None,
            students: 0,
            sources: Vec::new(),
            seed: 1,
            grader: "anatomy".into(),
        }
    }

    #[test]
    fn a_grader_that_stopped_says_how_many_students_it_left_and_a_missing_folder_is_said_before_grading() {
        let graded =
            GradedClass { failure: Some(anyhow::anyhow!("No space left on device")), students: 3, ..nothing_graded() };
        let said = format!("{:#}", graded.finish().unwrap_err());
        assert_eq!(
            said,
            "the grader stopped with 3 of 3 students not graded (the rows above are the graded ones): No space left on \
             device"
        );
        assert!(GradedClass { failure: None, students: 0, ..nothing_graded() }.finish().is_ok());
        let missing = check_output_folder("--csv", Some(Path::new("/nonexistent-folder/grades.csv"))).unwrap_err();
        assert_eq!(missing.to_string(), "--csv: the folder /nonexistent-folder does not exist");
        assert!(check_output_folder("--csv", Some(Path::new("grades.csv"))).is_ok(), "the current folder");
    }
}
