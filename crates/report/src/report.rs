//! The class at a glance: after a class is graded, which steps did it get wrong, and how? Each check names
//! the mistake it recognises ([`mistakes`]); summed over the class, those names are what a lecturer wants
//! before the next lecture. [`Summary`] counts them (with the points, the statuses per exercise, the
//! grader's refusals and stops, and the similar pairs when asked), and [`page`] draws them as one
//! self-contained HTML page: inline SVG charts (plotters), each with a title, labelled axes, a legend
//! readable in grey, and the same numbers beside it as a table. No script, nothing from the network.
//!
//! The report is made from the grade sheet's rows, and those can be read back from the JSON lines of
//! `anatomy exercises grade --json` ([`GradeLine`]), so `anatomy exercises report` makes the same
//! report again without grading.
use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, ensure, Context, Result};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::mistakes::{self, STOPS, UNNAMED};
use super::sandbox::Tier;
use super::sheet::{feedback_files, write_whole, GradeLine, Row, Sheet};
use super::similarity::{Evidence, Pair};
use super::{find, Exercise, Status, EXERCISES};
use maud::{html, Markup, PreEscaped, DOCTYPE};

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
    pub mistakes: Vec<Mistake>,
    /// The grader's own verdicts (refusals, compile errors, the sandbox's limits), per exercise.
    pub stops: Vec<Mistake>,
    /// Pairs of students whose files matched, when the similarity report was asked for.
    pub similarity: Option<Vec<Similar>>,
    /// Who handed in late, when the course has a late policy.
    pub late: Option<Lateness>,
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
pub struct Mistake {
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
pub struct Lateness {
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
    pub fn new(book: &Sheet, rows: &[Row], similar: Option<&[Pair]>) -> Summary {
        let (mistakes, stops) = count_mistakes(book, rows);
        Summary {
            students: rows.len(),
            exercises: book.chosen.iter().map(|e| e.name.to_string()).collect(),
            max_points: book.max_total(),
            points: Points::of(book, rows),
            statuses: statuses(book, rows),
            mistakes,
            stops,
            similarity: similar.map(|pairs| pairs.iter().map(Similar::of).collect()),
            late: Lateness::of(book, rows),
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
    fn of(book: &Sheet, rows: &[Row]) -> Points {
        let n = rows.len();
        let mut totals: Vec<f64> = rows.iter().map(|r| book.total(r)).collect();
        totals.sort_by(f64::total_cmp);
        let max = book.max_total();
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
fn statuses(book: &Sheet, rows: &[Row]) -> Vec<Statuses> {
    let count = |i: usize, s: Status| rows.iter().filter(|r| r.outcomes[i].status == s).count();
    book.chosen
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
fn count_mistakes(book: &Sheet, rows: &[Row]) -> (Vec<Mistake>, Vec<Mistake>) {
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
        let e = book.chosen[i];
        let stop = STOPS.iter().any(|(s, _)| *s == id);
        let mistake = Mistake {
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

impl Lateness {
    /// Who handed in on time, late (latest first) or at no known time, when the course has a late policy.
    fn of(book: &Sheet, rows: &[Row]) -> Option<Lateness> {
        let policy = book.course.late?;
        let mut late: Vec<LateHandIn> = rows
            .iter()
            .filter_map(|r| {
                let days = book.days_late(r).filter(|&d| d > 0)?;
                let handed_in = super::points::format_time(r.handed_in?);
                Some(LateHandIn { student: r.student.clone(), handed_in, days, kept: round(book.kept(r)) })
            })
            .collect();
        late.sort_by(|a, b| b.handed_in.cmp(&a.handed_in));
        Some(Lateness {
            due: book.due.map(super::points::format_time),
            penalty_per_day: policy.penalty_per_day,
            max_days: policy.max_days,
            on_time: rows.iter().filter(|r| book.days_late(r) == Some(0)).count(),
            late,
            unknown: match book.due {
                Some(_) => rows.iter().filter(|r| r.handed_in.is_none()).map(|r| r.student.clone()).collect(),
                None => Vec::new(),
            },
            extended: rows
                .iter()
                .filter_map(|r| {
                    let e = r.extension.as_ref()?;
                    let due = super::points::format_time(e.due);
                    Some(Extended { student: r.student.clone(), due, reason: e.reason.clone() })
                })
                .collect(),
        })
    }
}

/// A graded class as the JSON lines of `anatomy exercises grade --json` keep it.
pub struct Saved {
    /// The exercises graded: those the first line names, in course order.
    pub chosen: Vec<&'static Exercise>,
    /// The sandbox's tier, by name (all a line keeps).
    pub tier: Tier,
    /// The due date, when the class was graded with one.
    pub due: Option<time::OffsetDateTime>,
    pub rows: Vec<Row>,
}

/// A graded class read back from its JSON lines ([`GradeLine`]). A line that is not a grading's is refused
/// with its number.
pub fn read_lines(text: &str) -> Result<Saved> {
    let mut lines: Vec<(usize, GradeLine)> = Vec::new();
    for (i, l) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let value: serde_json::Value = serde_json::from_str(l).with_context(|| {
            format!("line {} is not JSON: give the output of `anatomy exercises grade --json`", i + 1)
        })?;
        let line = serde_json::from_value(value).with_context(|| {
            format!("line {} is not a grading's: give the output of `anatomy exercises grade --json`", i + 1)
        })?;
        lines.push((i + 1, line));
    }
    let Some((_, first)) = lines.first() else {
        bail!("no graded students in it: give the output of `anatomy exercises grade --json`");
    };
    let chosen: Vec<&'static Exercise> = EXERCISES.iter().filter(|e| first.statuses.contains_key(e.name)).collect();
    ensure!(!chosen.is_empty(), "line 1 names no exercise: give the output of `anatomy exercises grade --json`");
    let tier = Tier::named(&first.sandbox_tier);
    let due = first.late.as_ref().and_then(|l| anatomy_intake::times::parse_time(&l.due));
    let rows =
        lines.iter().map(|(n, line)| line.row(&chosen).with_context(|| format!("line {n}"))).collect::<Result<_>>()?;
    Ok(Saved { chosen, tier, due, rows })
}

/// Makes the report again from a file of saved JSON lines (`grade --json`), into `out`, with the
/// similarity pairs of `class` (the graded class folder) when given.
pub fn remake(grades: &Path, out: &Path, course: &super::points::CourseFile, class: Option<&Path>) -> Result<Summary> {
    let text = std::fs::read_to_string(grades)
        .with_context(|| format!("cannot read {}: give the JSON lines of `grade --json`", grades.display()))?;
    let Saved { chosen, tier, due, rows } = read_lines(&text)?;
    ensure!(
        due.is_none() || course.late.is_some(),
        "the grades were given a due date but the course file has no [late] policy: give the course file they were graded with (--course)"
    );
    let book = Sheet { chosen: &chosen, course, tier: &tier, due };
    let pairs = match class {
        Some(class) => Some(
            super::similarity::report::compare(
                &super::handin::students(class)?,
                &chosen,
                super::similarity::THRESHOLD,
            )?
            .pairs,
        ),
        None => None,
    };
    write(out, &book, &rows, pairs.as_deref())
}

impl Summary {
    /// The line that says where the report is and what it found first.
    pub fn closing_line(&self, dir: &Path) -> String {
        let first = self.mistakes.first().map(|m| {
            let who = if m.students == 1 { "student" } else { "students" };
            format!("; the most frequent mistake: {} in {} ({} {who})", m.mistake, m.exercise, m.students)
        });
        format!("wrote the class report to {}{}", dir.join("index.html").display(), first.unwrap_or_default())
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Writes the report into `dir`: `index.html`, `summary.json` and `feedback/STUDENT.md` for each student
/// (each file whole). Returns the summary.
pub fn write(dir: &Path, book: &Sheet, rows: &[Row], similar: Option<&[Pair]>) -> Result<Summary> {
    let summary = Summary::new(book, rows, similar);
    let feedback = dir.join("feedback");
    std::fs::create_dir_all(&feedback).with_context(|| format!("cannot create {}", feedback.display()))?;
    for (row, (_, file)) in rows.iter().zip(&summary.feedback) {
        write_whole(&dir.join(file), &book.feedback(row))?;
    }
    write_whole(&dir.join("summary.json"), &(serde_json::to_string_pretty(&summary)? + "\n"))?;
    write_whole(&dir.join("index.html"), &page(&summary))?;
    Ok(summary)
}

// Okabe and Ito's colour-blind-safe palette, chosen so that the four statuses also differ in grey
// (luminance about 30 %, 47 %, 64 % and 87 %).
const PASSED: RGBColor = RGBColor(0, 114, 178);
const FAILED: RGBColor = RGBColor(213, 94, 0);
const NO_BUILD: RGBColor = RGBColor(230, 159, 0);
const NOT_DONE: RGBColor = RGBColor(221, 221, 221);
const INK: RGBColor = RGBColor(40, 40, 40);

/// A path segment as a link holds it: every byte outside the unreserved set percent-encoded.
fn href(path: &str) -> String {
    path.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// An SVG drawn by `draw` on a `width` × `height` canvas, with its title as the picture's `<title>` (what
/// a screen reader says, and a browser shows on hover).
fn svg(
    (title, description): (&str, &str),
    (width, height): (u32, u32),
    draw: impl FnOnce(DrawingArea<SVGBackend, plotters::coord::Shift>),
) -> String {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (width, height)).into_drawing_area();
        let _ = root.fill(&WHITE);
        draw(root.clone());
        let _ = root.present();
    }
    transformer_anatomy::html::titled_svg(&text, title, description)
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The legend of the series that have labels, boxed, where it covers nothing.
fn legend<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, position: SeriesLabelPosition) {
    let _ = chart
        .configure_series_labels()
        .label_font(("sans-serif", 15))
        .border_style(INK.mix(0.3))
        .background_style(WHITE.mix(0.9))
        .position(position)
        .draw();
}

/// The totals as a histogram, with the mean and median marked.
fn points_chart(s: &Summary) -> String {
    let title = format!("Points per student (of {})", crate::sheet::points(s.max_points));
    let top = s.points.histogram.iter().map(|b| b.2).max().unwrap_or(0).max(1) as f64 * 1.15;
    let description = "A histogram of the students' total points in ten equal bins, with the mean and the median \
                       marked as dashed lines.";
    svg((&title, description), (620, 340), |root| {
        let Ok(mut chart) = ChartBuilder::on(&root)
            .caption(&title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(52)
            .build_cartesian_2d(0f64..s.max_points.max(1.0), 0f64..top)
        else {
            return;
        };
        let _ = chart
            .configure_mesh()
            .x_desc("points")
            .y_desc("students")
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .x_label_formatter(&|v| format!("{v:.0}"))
            .light_line_style(WHITE)
            .draw();
        let bars = s
            .points
            .histogram
            .iter()
            .map(|&(from, to, n)| Rectangle::new([(from, 0.0), (to, n as f64)], PASSED.filled()));
        if let Ok(drawn) = chart.draw_series(bars) {
            drawn
                .label("students in the bin")
                .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], PASSED.filled()));
        }
        for (value, name, dash) in [(s.points.mean, "mean", 6), (s.points.median, "median", 2)] {
            let line = DashedLineSeries::new([(value, 0.0), (value, top)], dash, 4, INK.stroke_width(2));
            if let Ok(drawn) = chart.draw_series(line) {
                drawn.label(format!("{name} {}", crate::sheet::points(value))).legend(move |(x, y)| {
                    plotters::element::DashedPathElement::new([(x, y), (x + 18, y)], dash, 4, INK.stroke_width(2))
                });
            }
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft);
    })
}

/// Horizontal bars, one row per label; each row's segments stacked left to right in the legend's order.
fn stacked_bars(
    title: &str,
    (x_desc, y_desc): (&str, &str),
    rows: &[(String, Vec<f64>)],
    legend: &[(&str, RGBColor)],
    x_max: f64,
) -> String {
    let height = 100 + 28 * rows.len().max(1) as u32;
    let n = rows.len().max(1) as f64;
    let description = format!(
        "Horizontal bars, one row per {y_desc}, their length {x_desc}, in segments: {}.",
        legend.iter().map(|l| l.0).collect::<Vec<_>>().join(", ")
    );
    svg((title, &description), (720, height), |root| {
        let Ok(mut chart) = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(320)
            .build_cartesian_2d(0f64..x_max.max(1.0), 0f64..n)
        else {
            return;
        };
        let names = |v: &f64| {
            let i = v.floor() as usize;
            let row = rows.len().checked_sub(1 + i).and_then(|r| rows.get(r));
            row.filter(|_| (v - v.floor() - 0.5).abs() < 1e-6).map(|r| r.0.clone()).unwrap_or_default()
        };
        let _ = chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 15))
            .y_labels(2 * rows.len() + 1)
            .y_label_formatter(&names)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .disable_y_mesh()
            .light_line_style(WHITE)
            .draw();
        for (k, (name, colour)) in legend.iter().enumerate() {
            let bars = rows.iter().enumerate().map(|(i, (_, values))| {
                let y = (rows.len() - 1 - i) as f64;
                let from: f64 = values[..k].iter().sum();
                Rectangle::new([(from, y + 0.15), (from + values[k], y + 0.85)], colour.filled())
            });
            if let Ok(drawn) = chart.draw_series(bars) {
                let colour = *colour;
                drawn.label(*name).legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], colour.filled()));
            }
        }
        if legend.len() > 1 {
            self::legend(&mut chart, SeriesLabelPosition::UpperRight);
        }
    })
}

fn table(head: &[&str], rows: impl IntoIterator<Item = Vec<Markup>>) -> Markup {
    html! {
        table {
            thead { tr { @for h in head { th { (h) } } } }
            tbody { @for row in rows { tr { @for cell in row { td { (cell) } } } } }
        }
    }
}

/// A name the course declares, set as code.
fn code(text: &str) -> Markup {
    html! { code { (text) } }
}

/// A titled part of the page: its chart and, beside it (or below it, when the table is `wide`), the same
/// numbers as a table.
fn section(title: &str, intro: Markup, chart: Option<String>, numbers: Markup, wide: bool) -> Markup {
    html! {
        section {
            h2 { (title) }
            p { (intro) }
            div class=(if wide { "stack" } else { "pair" }) {
                // plotters' SVG, with its title (titled_svg escapes it).
                @if let Some(chart) = chart { figure { (PreEscaped(chart)) } }
                div class="numbers" { (numbers) }
            }
        }
    }
}

/// The report as one self-contained page. Every text goes through maud, which escapes it where it lands
/// (a student's name, a check's message, a hand-in time); only plotters' SVG is placed as it is.
pub fn page(s: &Summary) -> String {
    use crate::sheet::points;
    let similar = s.similarity.as_deref().map(similar_section);
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "The class at a glance" }
                meta name="viewport" content="width=device-width";
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { "The class at a glance" }
                p {
                    (s.students) " students, " (s.exercises.len()) " exercises; mean " (points(s.points.mean))
                    " and median " (points(s.points.median)) " of " (points(s.max_points)) " points."
                }
                (mistakes_section(s))
                (exercises_section(s))
                (totals_section(s))
                (stops_section(s))
                @if let Some(late) = &s.late { (late_section(late)) }
                @if let Some(similar) = similar { (similar) }
                (students_section(s))
            }
        }
    };
    page.into_string() + "\n"
}

/// The named mistakes, most frequent first: a chart of the top fifteen and a table of all, each with what
/// a student who made it reads.
fn mistakes_section(s: &Summary) -> Markup {
    let top: Vec<&Mistake> = s.mistakes.iter().take(15).collect();
    let rows: Vec<(String, Vec<f64>)> =
        top.iter().map(|m| (format!("{}: {}", m.exercise, m.mistake), vec![100.0 * m.share])).collect();
    let chart = (!rows.is_empty()).then(|| {
        stacked_bars(
            "The most frequent mistakes",
            ("share of the class (%)", "exercise: mistake"),
            &rows,
            &[("students who made it", FAILED)],
            rows.iter().map(|r| r.1[0]).fold(0.0, f64::max).max(10.0) * 1.1,
        )
    });
    let listed = s.mistakes.iter().map(|m| {
        vec![
            code(&m.exercise),
            html! {
                (code(&m.mistake)) " — " (m.words)
                @if let Some(said) = &m.message { br; small { "the check says: " (said) } }
                @if let Some(hint) = &m.hint { br; small { "hint: " (hint) } }
            },
            html! { (m.students) },
            html! { (format!("{:.0} %", 100.0 * m.share)) },
        ]
    });
    section(
        "Mistakes, most frequent first",
        html! {
            "Each check names the wrong answers it recognises; " (code("unnamed"))
            " counts failures no name covers. What a student reads for it is below each name."
        },
        chart,
        table(&["exercise", "mistake", "students", "share"], listed),
        true,
    )
}

/// Each exercise's statuses in course order, as stacked bars and a table.
fn exercises_section(s: &Summary) -> Markup {
    let total = |row: &Statuses| (row.passed + row.failed + row.does_not_compile + row.not_done) as f64;
    let statuses: Vec<(String, Vec<f64>)> = s
        .statuses
        .iter()
        .map(|r| {
            (r.exercise.clone(), vec![r.passed as f64, r.failed as f64, r.does_not_compile as f64, r.not_done as f64])
        })
        .collect();
    let legend = [("passed", PASSED), ("failed", FAILED), ("does not compile", NO_BUILD), ("not done", NOT_DONE)];
    // Room on the right for the legend, clear of the longest bar.
    let x_max = s.statuses.iter().map(total).fold(0.0, f64::max) * 1.8;
    section(
        "Each exercise, in course order",
        html! { "How many students passed, failed, handed in a file that does not compile, or left the stub untouched." },
        Some(stacked_bars("Statuses per exercise", ("students", "exercise"), &statuses, &legend, x_max)),
        table(
            &["exercise", "passed", "failed", "does not compile", "not done"],
            s.statuses.iter().map(|r| {
                vec![
                    code(&r.exercise),
                    html! { (r.passed) },
                    html! { (r.failed) },
                    html! { (r.does_not_compile) },
                    html! { (r.not_done) },
                ]
            }),
        ),
        false,
    )
}

/// The class's totals in ten bins.
fn totals_section(s: &Summary) -> Markup {
    use crate::sheet::points;
    section(
        "Points",
        html! { "Totals in ten equal bins from 0 to full marks (the last bin includes full marks)." },
        Some(points_chart(s)),
        table(
            &["points", "students"],
            s.points
                .histogram
                .iter()
                .map(|(from, to, n)| vec![html! { (points(*from)) " – " (points(*to)) }, html! { (n) }]),
        ),
        false,
    )
}

/// The grader's own verdicts: refusals, compiler errors and the sandbox's limits.
fn stops_section(s: &Summary) -> Markup {
    let stops = s
        .stops
        .iter()
        .map(|m| vec![code(&m.exercise), html! { (code(&m.mistake)) " — " (m.words) }, html! { (m.students) }]);
    section(
        "Refusals and stops",
        html! { "The grader's own verdicts: files refused before compiling, compiler errors, and the sandbox's limits." },
        None,
        if s.stops.is_empty() {
            html! { p { "None." } }
        } else {
            table(&["exercise", "what happened", "students"], stops)
        },
        true,
    )
}

/// The similarity report's pairs, when it was asked for.
fn similar_section(pairs: &[Similar]) -> Markup {
    let listed = pairs.iter().map(|p| {
        vec![
            code(&p.exercise),
            html! { (p.students[0]) },
            html! { (p.students[1]) },
            html! { (format!("{:.2}", p.score)) },
            html! { (p.evidence) },
        ]
    });
    section(
        "Similar hand-ins",
        html! {
            "Pairs above the similarity threshold; weak evidence means the pair shares no more than one whole \
             answer holds."
        },
        None,
        if pairs.is_empty() {
            html! { p { "None above the threshold." } }
        } else {
            table(&["exercise", "student", "student", "score", "evidence"], listed)
        },
        true,
    )
}

/// A link to each student's feedback.
fn students_section(s: &Summary) -> Markup {
    let students = s.feedback.iter().map(|(student, file)| vec![html! { a href=(href(file)) { (student) } }]);
    section(
        "Students",
        html! { "Each student's feedback, as they receive it." },
        None,
        table(&["feedback"], students),
        true,
    )
}

/// Who handed in late, under the course's policy; without a due date, how to give one.
fn late_section(late: &Lateness) -> Markup {
    let policy = format!(
        "The course keeps {:.0} % fewer points per day, or part of a day, late, and none after {} days.",
        100.0 * late.penalty_per_day,
        late.max_days
    );
    let Some(due) = &late.due else {
        let intro = html! {
            (policy) " This grading had no due date: grade with " code { "--due 2026-12-01T23:59:00Z" }
            " to count late hand-ins from the hand-in times in the students' folders (nbgrader's "
            code { "timestamp.txt" } ")."
        };
        return section("Late hand-ins", intro, None, html! {}, true);
    };
    let intro = html! {
        "Due " (due) ". " (policy) " " (late.on_time) " on time, " (late.late.len()) " late."
        @if !late.unknown.is_empty() {
            " " (late.unknown.len()) " with no hand-in time in their folder (no nbgrader " code { "timestamp.txt" }
            "), counted on time: " (late.unknown.join(", ")) "."
        }
    };
    let listed = late.late.iter().map(|l| {
        vec![
            html! { (l.student) },
            html! { (l.handed_in) },
            html! { (l.days) },
            html! { (format!("{:.0} %", 100.0 * l.kept)) },
        ]
    });
    let extended = late.extended.iter().map(|e| vec![html! { (e.student) }, html! { (e.due) }, html! { (e.reason) }]);
    let numbers = html! {
        @match late.late.is_empty() {
            true => p { "Nobody handed in late." },
            false => (table(&["student", "handed in", "days late", "points kept"], listed)),
        }
        @if !late.extended.is_empty() {
            p { (late.extended.len()) " with an extension, counted from their own due date:" }
            (table(&["student", "due", "reason"], extended))
        }
    };
    section("Late hand-ins", intro, None, numbers, true)
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1260px;margin:1em auto;padding:0 1em;color:#222;box-sizing:border-box}\
h2{margin-top:1.6em;border-bottom:1px solid #ccc}.pair{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}\
figure{margin:0 0 1em 0;flex:0 1 auto;max-width:100%}.pair .numbers{flex:1 1 420px;min-width:0}.numbers{overflow-wrap:anywhere}code{overflow-wrap:normal;word-break:keep-all}\
table{border-collapse:collapse;font-size:14px;width:100%}th{white-space:nowrap}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}\
svg{max-width:100%;height:auto}";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::points::{self, CourseFile};

    fn outcome(name: &'static str, status: Status, mistake: Option<&str>) -> crate::Outcome {
        crate::Outcome {
            name,
            label: name.into(),
            status,
            message: format!("message of {name}"),
            parts: None,
            mistake: mistake.map(String::from),
        }
    }

    fn class() -> (Vec<&'static Exercise>, CourseFile, Vec<Row>) {
        let chosen = vec![find("layer_norm").unwrap(), find("causal_mask").unwrap()];
        let course = CourseFile::load(&points::default_file()).unwrap();
        let row = |student: &str, a: (Status, Option<&str>), b: (Status, Option<&str>)| Row {
            student: student.into(),
            outcomes: vec![outcome("layer_norm", a.0, a.1), outcome("causal_mask", b.0, b.1)],
            handed_in: None,
            extension: None,
        };
        let rows = vec![
            row("ada", (Status::Passed, None), (Status::Passed, None)),
            row("bob", (Status::Failed, Some("unbiased_variance")), (Status::Passed, None)),
            row(
                "<script>alert(1)</script>",
                (Status::Failed, Some("unbiased_variance")),
                (Status::Failed, Some("timed_out")),
            ),
            row("d e#?", (Status::NotDone, None), (Status::DoesNotCompile, Some("does_not_compile"))),
        ];
        (chosen, course, rows)
    }

    #[test]
    fn the_summary_counts_statuses_mistakes_and_points() {
        let (chosen, course, rows) = class();
        let book = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
        let s = Summary::new(&book, &rows, None);
        assert_eq!(s.students, 4);
        assert_eq!((s.statuses[0].passed, s.statuses[0].failed, s.statuses[0].not_done), (1, 2, 1));
        assert_eq!((s.statuses[1].passed, s.statuses[1].failed, s.statuses[1].does_not_compile), (2, 1, 1));
        assert_eq!(s.mistakes.len(), 1);
        assert_eq!(
            (s.mistakes[0].mistake.as_str(), s.mistakes[0].students, s.mistakes[0].share),
            ("unbiased_variance", 2, 0.5)
        );
        assert!(s.mistakes[0].hint.is_some() && s.mistakes[0].message.is_some());
        let stops: Vec<(&str, usize)> = s.stops.iter().map(|m| (m.mistake.as_str(), m.students)).collect();
        assert_eq!(stops, [("does_not_compile", 1), ("timed_out", 1)], "course order, then by id");
        assert!(s.stops.iter().all(|m| m.message.is_none()), "a stop's message may name a student's files");
        // Totals: full marks, one of two exercises, none, none.
        let (a, b) = (course.max("layer_norm"), course.max("causal_mask"));
        let mut totals = [a + b, b, 0.0, 0.0];
        totals.sort_by(f64::total_cmp);
        assert_eq!(s.points.median, (totals[1] + totals[2]) / 2.0);
        assert_eq!(s.points.histogram.iter().map(|h| h.2).sum::<usize>(), 4, "full marks fall in the last bin");
        assert_eq!(s.points.histogram[9].2, 1);
    }

    #[test]
    fn the_page_escapes_names_links_them_safely_and_titles_every_chart() {
        let (chosen, course, rows) = class();
        let book = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
        let html = page(&Summary::new(&book, &rows, None));
        assert!(!html.contains("<script"), "a student's name is text, never markup");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("href=\"feedback/d%20e%23%3F.md\""), "a link to the file, whatever the name");
        assert!(html.contains("href=\"feedback/%3Cscript%3Ealert%281%29%3C_script%3E.md\""));
        let charts = html.matches("<svg").count();
        assert_eq!(charts, 3, "mistakes, statuses, points");
        assert_eq!(html.matches("<title>").count(), charts + 1, "every chart and the page have a title");
        let namespaces = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
        assert_eq!(
            html.matches("http").count(),
            namespaces,
            "no address but the SVG namespace: nothing from the network"
        );
        assert!(!html.contains("src="), "nothing loaded: the page is self-contained");
    }

    #[test]
    fn late_hand_ins_show_only_under_a_late_policy_and_say_how_to_count_them() {
        let (chosen, mut course, rows) = class();
        let book = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
        let s = Summary::new(&book, &rows, None);
        assert_eq!(s.late, None, "the course file has no [late] table");
        assert!(!page(&s).contains("Late hand-ins"));
        course.late = Some(points::Late { penalty_per_day: 0.1, max_days: 5 });
        let book = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: None };
        let s = Summary::new(&book, &rows, None);
        let late = s.late.as_ref().unwrap();
        assert_eq!((late.due.as_deref(), late.on_time, late.late.len(), late.unknown.len()), (None, 0, 0, 0));
        assert!(page(&s).contains("This grading had no due date: grade with <code>--due"));
    }

    #[test]
    fn an_extension_moves_the_due_date_the_late_policy_counts_from_and_its_reason_stays_with_the_instructor() {
        use crate::sheet::Extension;
        let at = |s: &str| time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).unwrap();
        let (chosen, mut course, mut rows) = class();
        course.late = Some(points::Late { penalty_per_day: 0.1, max_days: 5 });
        rows.truncate(3);
        let handed_in = Some(at("2026-03-03T10:00:00Z")); // 46 hours after the class's due date
        for row in &mut rows {
            row.handed_in = handed_in;
        }
        rows[0].extension = Some(Extension { due: at("2026-03-04T12:00:00Z"), reason: "illness".into() });
        rows[2].extension = Some(Extension { due: at("2026-03-02T12:00:00Z"), reason: "travel".into() });
        let book = Sheet { chosen: &chosen, course: &course, tier: &Tier::None, due: Some(at("2026-03-01T12:00:00Z")) };
        // ada: on time by her own date; bob: two days begun after the class's; the third: one after theirs.
        let days: Vec<_> = rows.iter().map(|r| book.days_late(r)).collect();
        assert_eq!(days, [Some(0), Some(2), Some(1)]);
        let kept: Vec<_> = rows.iter().map(|r| book.kept(r)).collect();
        assert_eq!(kept, [1.0, 0.8, 0.9]);
        let ada = &rows[0];
        assert_eq!(book.earned(ada, &ada.outcomes[0]), course.max("layer_norm"));
        let feedback = book.feedback(ada);
        assert!(feedback.contains("Your due date was extended to 2026-03-04T12:00:00Z."), "{feedback}");
        assert!(!feedback.contains("illness") && !feedback.contains("late:"), "{feedback}");
        assert!(!book.feedback(&rows[1]).contains("extended"));
        let late = Summary::new(&book, &rows, None).late.unwrap();
        assert_eq!(late.on_time, 1);
        let counted: Vec<_> = late.late.iter().map(|l| (l.student.as_str(), l.days, l.kept)).collect();
        assert_eq!(counted, [("bob", 2, 0.8), ("<script>alert(1)</script>", 1, 0.9)]);
        let extended: Vec<_> = late.extended.iter().map(|e| (e.student.as_str(), e.reason.as_str())).collect();
        assert_eq!(extended, [("ada", "illness"), ("<script>alert(1)</script>", "travel")]);
        let page = page(&Summary::new(&book, &rows, None));
        assert!(page.contains("2 with an extension, counted from their own due date:") && page.contains("travel"));
    }

    #[test]
    fn a_name_with_a_slash_stays_in_the_feedback_folder_and_no_two_share_a_file() {
        let rows: Vec<Row> = ["a/../b", "..", "", "Ana", "ana", "ANA", "a_.._b", "caf\\xE9", "caf\\xE8"]
            .iter()
            .map(|s| Row { student: s.to_string(), outcomes: Vec::new(), handed_in: None, extension: None })
            .collect();
        let files = feedback_files(&rows);
        assert_eq!(
            files,
            [
                "a_.._b.md",
                "_...md",
                "_.md",
                "Ana.md",
                "ana (2).md",
                "ANA (3).md",
                "a_.._b (2).md",
                "caf\\xE9.md",
                "caf\\xE8.md"
            ]
        );
        // Two long labels that differ only at their end: each file name within the 255 bytes a name may
        // have, and apart.
        let long = |last: &str| Row {
            student: format!("{}{last}", "é".repeat(150)),
            outcomes: Vec::new(),
            handed_in: None,
            extension: None,
        };
        let files = feedback_files(&[long("a"), long("b")]);
        assert!(files.iter().all(|f| f.len() <= 200) && files[0] != files[1], "{files:?}");
    }
}
