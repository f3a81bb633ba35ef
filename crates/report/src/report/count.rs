//! The report's first job: counting a graded class — the points, each exercise's statuses, the named
//! mistakes and the grader's stops, who handed in late, and the similar pairs when asked — into the
//! [`Summary`] the page draws and `summary.json` keeps.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use anatomy_checks::mistakes::{self, STOPS, UNNAMED};
use anatomy_course::{find, Status};

use crate::sheet::{feedback_files, Row, Sheet};
use anatomy_intake::similarity::{Evidence, Pair};

/// Everything the page shows, as `summary.json` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub students: usize,
    pub exercises: Vec<String>,
    pub max_points: f64,
    pub points: Points,
    /// Per exercise in course order: how many students passed, failed, did not compile, did not start.
    pub statuses: Vec<Statuses>,
    /// The checks' named mistakes (and failures no name covers), most frequent first.
    pub mistakes: Vec<MistakeCount>,
    /// The grader's own verdicts (refusals, compile errors, the sandbox's limits), per exercise.
    pub stops: Vec<MistakeCount>,
    /// Pairs of students whose files matched, when the similarity report was asked for.
    pub similarity: Option<Vec<Similar>>,
    /// Who handed in late, when the course has a late policy.
    pub late: Option<LateCounts>,
    /// Each student's file of feedback, relative to the report's folder.
    pub feedback: Vec<(String, String)>,
}

/// The totals: mean, median and a histogram of ten equal bins from 0 to the maximum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Points {
    pub mean: f64,
    pub median: f64,
    /// `[from, to, students]`: the last bin holds its upper end (full marks).
    pub histogram: Vec<(f64, f64, usize)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statuses {
    pub exercise: String,
    pub passed: usize,
    pub failed: usize,
    pub does_not_compile: usize,
    pub not_done: usize,
}

/// One mistake of one exercise: how many students made it, their share of the class, and what a student
/// who made it reads (the check's words for a named mistake, and the exercise's first hint).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MistakeCount {
    pub exercise: String,
    pub mistake: String,
    pub students: usize,
    pub share: f64,
    pub words: String,
    pub message: Option<String>,
    pub hint: Option<String>,
}

/// Late hand-ins under the course's policy: on time, late (with what they keep), and unknown (no hand-in
/// time in the student's folder).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LateCounts {
    /// The due date the class was graded against (RFC 3339), if one was given (`grade --due`).
    pub due: Option<String>,
    pub penalty_per_day: f64,
    pub max_days: u32,
    pub on_time: usize,
    /// The students handed in after the due date, latest first.
    pub late: Vec<LateHandIn>,
    /// The students whose folder gives no hand-in time (no nbgrader `timestamp.txt`).
    pub unknown: Vec<String>,
    /// The students held to a due date of their own, with why.
    #[serde(default)]
    pub extended: Vec<Extended>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extended {
    pub student: String,
    pub due: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LateHandIn {
    pub student: String,
    pub handed_in: String,
    pub days: u32,
    /// The share of the points kept.
    pub kept: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Similar {
    pub exercise: String,
    pub students: [String; 2],
    pub score: f64,
    pub evidence: String,
}

impl Summary {
    /// Counts a graded class. `similar` is the similarity report's pairs, when it was asked for.
    pub fn new(sheet: &Sheet, rows: &[Row], similar: Option<&[Pair]>) -> Summary {
        let (mistakes, stops) = count_mistakes(sheet, rows);
        Summary {
            students: rows.len(),
            exercises: sheet.chosen.iter().map(|e| e.name.to_string()).collect(),
            max_points: sheet.max_total(),
            points: Points::of(sheet, rows),
            statuses: statuses(sheet, rows),
            mistakes,
            stops,
            similarity: similar.map(|pairs| pairs.iter().map(Similar::of).collect()),
            late: LateCounts::of(sheet, rows),
            feedback: rows
                .iter()
                .zip(feedback_files(rows))
                .map(|(r, file)| (r.student.clone(), format!("feedback/{file}")))
                .collect(),
        }
    }
}

impl Points {
    /// The class's totals: mean, median and ten equal bins from 0 to the most points.
    fn of(sheet: &Sheet, rows: &[Row]) -> Points {
        let n = rows.len();
        let mut totals: Vec<f64> = rows.iter().map(|r| sheet.total(r)).collect();
        totals.sort_by(f64::total_cmp);
        let max = sheet.max_total();
        let median = match n {
            0 => 0.0,
            _ if n % 2 == 1 => totals[n / 2],
            _ => (totals[n / 2 - 1] + totals[n / 2]) / 2.0,
        };
        let mean = if n == 0 { 0.0 } else { totals.iter().sum::<f64>() / n as f64 };
        let width = if max > 0.0 { max / 10.0 } else { 1.0 };
        let histogram = (0..10)
            .map(|b| {
                let (from, to) = (b as f64 * width, (b + 1) as f64 * width);
                let count = totals.iter().filter(|&&t| t >= from && (t < to || (b == 9 && t <= to))).count();
                (round(from), round(to), count)
            })
            .collect();
        Points { mean: round(mean), median, histogram }
    }
}

/// Each exercise's count of students per status, in course order.
fn statuses(sheet: &Sheet, rows: &[Row]) -> Vec<Statuses> {
    let count = |i: usize, s: Status| rows.iter().filter(|r| r.outcomes[i].status == s).count();
    sheet
        .chosen
        .iter()
        .enumerate()
        .map(|(i, e)| Statuses {
            exercise: e.name.to_string(),
            passed: count(i, Status::Passed),
            failed: count(i, Status::Failed),
            does_not_compile: count(i, Status::DoesNotCompile),
            not_done: count(i, Status::NotDone),
        })
        .collect()
}

/// The named mistakes (most frequent first; ties in course order) and the grader's stops, each with how
/// many students it held.
fn count_mistakes(sheet: &Sheet, rows: &[Row]) -> (Vec<MistakeCount>, Vec<MistakeCount>) {
    let n = rows.len();
    // (course position, id) → (students, first message).
    let mut found: BTreeMap<(usize, String), (usize, String)> = BTreeMap::new();
    for row in rows {
        for (i, o) in row.outcomes.iter().enumerate() {
            if let Some(id) = &o.mistake {
                found.entry((i, id.clone())).or_insert((0, o.message.clone())).0 += 1;
            }
        }
    }
    let (mut named, mut stops) = (Vec::new(), Vec::new());
    for ((i, id), (students, message)) in found {
        let e = sheet.chosen[i];
        let stop = STOPS.iter().any(|(s, _)| *s == id);
        let mistake = MistakeCount {
            exercise: e.name.to_string(),
            words: mistakes::words(&id),
            // A check's words name the mistake; a stop's message may name a student's files.
            message: (!stop && id != UNNAMED).then_some(message),
            hint: find(e.name).ok().and_then(|e| e.hint_levels().into_iter().next()),
            mistake: id,
            students,
            share: if n == 0 { 0.0 } else { round(students as f64 / n as f64) },
        };
        if stop {
            stops.push(mistake)
        } else {
            named.push(mistake)
        }
    }
    // The sort is stable: ties stay in course order.
    named.sort_by_key(|m| std::cmp::Reverse(m.students));
    (named, stops)
}

impl Similar {
    fn of(p: &Pair) -> Similar {
        let evidence = match p.evidence {
            Evidence::Strong => "strong",
            Evidence::Weak => "weak",
        };
        Similar {
            exercise: p.exercise.clone(),
            students: p.students.clone(),
            score: round(p.score),
            evidence: evidence.into(),
        }
    }
}

impl LateCounts {
    /// Who handed in on time, late (latest first) or at no known time, when the course has a late policy.
    fn of(sheet: &Sheet, rows: &[Row]) -> Option<LateCounts> {
        let policy = sheet.course.late?;
        let mut late: Vec<LateHandIn> = rows
            .iter()
            .filter_map(|r| {
                let days = sheet.days_late(r).filter(|&d| d > 0)?;
                let handed_in = anatomy_grade::points::format_time(r.handed_in?);
                Some(LateHandIn { student: r.student.clone(), handed_in, days, kept: round(sheet.kept(r)) })
            })
            .collect();
        late.sort_by(|a, b| b.handed_in.cmp(&a.handed_in));
        Some(LateCounts {
            due: sheet.due.map(anatomy_grade::points::format_time),
            penalty_per_day: policy.penalty_per_day,
            max_days: policy.max_days,
            on_time: rows.iter().filter(|r| sheet.days_late(r) == Some(0)).count(),
            late,
            unknown: match sheet.due {
                Some(_) => rows.iter().filter(|r| r.handed_in.is_none()).map(|r| r.student.clone()).collect(),
                None => Vec::new(),
            },
            extended: rows
                .iter()
                .filter_map(|r| {
                    let e = r.extension.as_ref()?;
                    let due = anatomy_grade::points::format_time(e.due);
                    Some(Extended { student: r.student.clone(), due, reason: e.reason.clone() })
                })
                .collect(),
        })
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
