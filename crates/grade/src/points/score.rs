//! One graded cell scored, once, for every output that shows it: the grade sheet (its table, CSV, JSON
//! lines and feedback), the gradebook (and its exports), and Gradescope's, PrairieLearn's and GitHub
//! Classroom's results. A cell's points are what it earned (all of them when passed, a share per passed
//! part), times the share the late policy keeps, to a hundredth of a point; a total adds the cells' points.
use super::Late;
use anatomy_course::Status;

/// One cell's points: the most it can earn, what it earned before lateness, the share kept, and what
/// counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// The most the cell can earn (the course's points for the exercise).
    pub max: f64,
    /// What it earned before lateness ([`earned_of`]).
    pub earned: f64,
    /// The share of it the late policy keeps: 1 when on time, when the hand-in time or due date is
    /// unknown, or without a policy.
    pub kept: f64,
    /// What counts: `earned` × `kept`, to a hundredth of a point.
    pub points: f64,
}

/// Scores a cell worth `max` with this status and these parts passed (of how many), handed in `late`:
/// the days late (whole days, rounded up) under the course's policy, when both are known.
pub fn score(max: f64, status: Status, parts: Option<(usize, usize)>, late: Option<(u32, Late)>) -> Score {
    let earned = earned_of(max, status, parts);
    let kept = late.map_or(1.0, |(days, policy)| policy.kept(days));
    Score { max, earned, kept, points: hundredth(earned * kept) }
}

/// What a cell worth `max` earns with this status and these parts passed (of how many), before lateness.
pub fn earned_of(max: f64, status: Status, parts: Option<(usize, usize)>) -> f64 {
    match (status, parts) {
        (Status::Passed, _) => max,
        (Status::Failed, Some((passed, total))) if total > 0 => hundredth(max * passed as f64 / total as f64),
        _ => 0.0,
    }
}

/// Points to a hundredth, the one rounding of a score.
pub fn hundredth(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// A total of cells' points, as the grade sheet adds them (each cell rounded first), to a hundredth: the
/// sum of rounded cells can differ by a hundredth from the unrounded sum rounded (4.28 of 3.115 + 1.169).
/// Nothing adds up to 0, not -0 (a float sum of nothing).
pub fn total(points: impl IntoIterator<Item = f64>) -> f64 {
    hundredth(points.into_iter().fold(0.0, |sum, p| sum + p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_keeps_its_late_share_to_a_hundredth_and_a_total_adds_the_rounded_cells() {
        let policy = Late { penalty_per_day: 0.1, max_days: 5 };
        let s = score(3.33, Status::Failed, Some((1, 2)), Some((3, policy)));
        assert_eq!((s.max, s.earned, s.kept, s.points), (3.33, 1.67, 0.7, 1.17));
        assert_eq!(score(4.45, Status::Passed, None, Some((1, policy))).points, 4.01);
        assert_eq!(score(5.0, Status::Passed, None, Some((6, policy))).points, 0.0, "past max_days");
        assert_eq!(score(5.0, Status::Passed, None, None).kept, 1.0);
        let cells = [4.45 * 0.7, 1.67 * 0.7];
        assert_eq!((total(cells.map(hundredth)), hundredth(cells.iter().sum())), (4.29, 4.28));
        assert!(total([]).is_sign_positive(), "nothing adds up to 0, not -0");
    }
}
