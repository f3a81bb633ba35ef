//! The report's second job: the [`Summary`] as one self-contained HTML page. Every text goes through maud,
//! which escapes it where it lands (a student's name, a check's message, a hand-in time); only plotters'
//! SVG and the page's own style are placed as they are.
use maud::{html, Markup, PreEscaped, DOCTYPE};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::count::{LateCounts, MistakeCount, Similar, Statuses, Summary};

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
    let top: Vec<&MistakeCount> = s.mistakes.iter().take(15).collect();
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
fn late_section(late: &LateCounts) -> Markup {
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
    use super::super::count::{Extended, LateHandIn, Points};
    use super::*;

    /// A summary written out by hand, so that the page is tested apart from the counting: two students,
    /// two exercises (the statuses of one), no mistake, no stop.
    fn summary() -> Summary {
        Summary {
            students: 2,
            exercises: vec!["layer_norm".into(), "causal_mask".into()],
            max_points: 5.0,
            points: Points {
                mean: 2.5,
                median: 2.5,
                histogram: (0..10).map(|b| (b as f64 / 2.0, (b + 1) as f64 / 2.0, 0)).collect(),
            },
            statuses: vec![Statuses {
                exercise: "layer_norm".into(),
                passed: 1,
                failed: 0,
                does_not_compile: 0,
                not_done: 1,
            }],
            mistakes: Vec::new(),
            stops: Vec::new(),
            similarity: None,
            late: None,
            feedback: vec![("ada".into(), "feedback/ada.md".into()), ("bo".into(), "feedback/bo.md".into())],
        }
    }

    #[test]
    fn a_link_percent_encodes_every_byte_outside_the_unreserved_set_and_keeps_slashes() {
        assert_eq!(href("feedback/ada.md"), "feedback/ada.md");
        assert_eq!(href("feedback/a b#?&\"'.md"), "feedback/a%20b%23%3F%26%22%27.md");
        assert_eq!(href("é~-_.Z9"), "%C3%A9~-_.Z9");
        assert_eq!(href("%41"), "%2541", "a percent sign is encoded, never read as an escape");
    }

    #[test]
    fn the_page_opens_with_the_class_in_numbers_and_says_none_where_there_is_nothing() {
        let html = page(&summary());
        assert!(html.starts_with("<!DOCTYPE html><html lang=\"en\">") && html.ends_with("</html>\n"));
        assert!(html.contains("<p>2 students, 2 exercises; mean 2.50 and median 2.50 of 5 points.</p>"), "{html}");
        assert!(html.contains("<h2>Refusals and stops</h2>") && html.contains("<p>None.</p>"));
        assert_eq!(html.matches("<svg").count(), 2, "no mistakes: no mistakes' chart");
        assert!(!html.contains("Similar hand-ins") && !html.contains("Late hand-ins"), "neither was asked for");
        assert!(html.contains("<td>2 – 2.50</td>"), "each bin with its points: {html}");
        let similar = page(&Summary { similarity: Some(Vec::new()), ..summary() });
        assert!(similar.contains("<h2>Similar hand-ins</h2>") && similar.contains("None above the threshold."));
        let pairs = vec![Similar {
            exercise: "layer_norm".into(),
            students: ["ada".into(), "b<o>".into()],
            score: 0.8765,
            evidence: "weak".into(),
        }];
        let similar = page(&Summary { similarity: Some(pairs), ..summary() });
        assert!(similar.contains("<td>b&lt;o&gt;</td><td>0.88</td><td>weak</td>"), "{similar}");
    }

    #[test]
    fn the_late_section_gives_the_policy_the_due_date_and_each_late_or_extended_student() {
        let late = LateCounts {
            due: Some("2026-03-01T12:00:00Z".into()),
            penalty_per_day: 0.15,
            max_days: 4,
            on_time: 3,
            late: vec![LateHandIn {
                student: "bo".into(),
                handed_in: "2026-03-02T13:00:00Z".into(),
                days: 2,
                kept: 0.7,
            }],
            unknown: vec!["cy".into(), "dee".into()],
            extended: vec![Extended {
                student: "ada".into(),
                due: "2026-03-04T12:00:00Z".into(),
                reason: "<flu>".into(),
            }],
        };
        let html = page(&Summary { late: Some(late.clone()), ..summary() });
        let intro =
            "Due 2026-03-01T12:00:00Z. The course keeps 15 % fewer points per day, or part of a day, late, and \
                     none after 4 days. 3 on time, 1 late. 2 with no hand-in time in their folder (no nbgrader \
                     <code>timestamp.txt</code>), counted on time: cy, dee.";
        assert!(html.contains(intro), "{html}");
        assert!(html.contains("<td>bo</td><td>2026-03-02T13:00:00Z</td><td>2</td><td>70 %</td>"), "{html}");
        assert!(html.contains("1 with an extension, counted from their own due date:"));
        assert!(html.contains("<td>ada</td><td>2026-03-04T12:00:00Z</td><td>&lt;flu&gt;</td>"), "{html}");
        let nobody = LateCounts { late: Vec::new(), unknown: Vec::new(), extended: Vec::new(), ..late };
        let html = page(&Summary { late: Some(nobody), ..summary() });
        assert!(html.contains("3 on time, 0 late.</p>") && html.contains("<p>Nobody handed in late.</p>"), "{html}");
        assert!(!html.contains("with an extension") && !html.contains("no hand-in time"));
    }
}
