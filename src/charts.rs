//! # Charts for the notebooks and the book
//!
//! Curves and bars drawn with `plotters` as self-contained SVG, each with a title, labelled axes, ticks
//! and a legend, so a picture says what it shows without the code beside it. The beam-search tree is the
//! one picture no chart type fits; it is drawn by hand.
//!
//! Chapter section: [`chapters/10-training.md`](../chapters/10-training.md).
use maud::{html, Markup};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::decoding::BeamSearch;
use crate::html::{titled_svg, Html};

const COLOURS: [RGBColor; 4] =
    [RGBColor(59, 130, 246), RGBColor(249, 115, 22), RGBColor(16, 185, 129), RGBColor(239, 68, 68)];
const SIZE: (u32, u32) = (640, 360);

/// One named curve: `(x, y)` points.
pub struct Series<'a> {
    pub name: &'a str,
    pub points: Vec<(f64, f64)>,
}

fn range(values: impl Iterator<Item = f64> + Clone) -> std::ops::Range<f64> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if !lo.is_finite() || !hi.is_finite() {
        return 0.0..1.0;
    }
    let pad = ((hi - lo) * 0.05).max(1e-9);
    (lo - pad)..(hi + pad)
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A tick's number without trailing zeros: `2000`, `0.25`, `0.0007`.
fn tick_text(v: &f64) -> String {
    let text = format!("{v:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

/// The series' names, for a chart's description.
fn names(series: &[Series]) -> String {
    series.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

/// Named x ticks for a chart whose x axis is categories: how many tick positions, and their text.
type CategoryTicks<'t> = (usize, &'t dyn Fn(&f64) -> String);

// plotters' SVG backend writes a font of size `n` as `0.806 n` px: 15 is the smallest size that a reader
// sees as at least 12 px.

/// The frame every chart shares: white background, title, axis labels and ticks (named ones for
/// categories), the series `draw` adds, and a legend of the series that have labels.
fn framed(
    (title, description): (&str, &str),
    (x_label, y_label): (&str, &str),
    (x, y): (std::ops::Range<f64>, std::ops::Range<f64>),
    categories: Option<CategoryTicks<'_>>,
    draw: impl FnOnce(&mut Chart<'_, '_>),
) -> Html {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        let _ = root.fill(&WHITE);
        let chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(x, y);
        if let Ok(mut chart) = chart {
            let mut style = chart.configure_mesh();
            style.x_desc(x_label).y_desc(y_label).light_line_style(WHITE);
            style.label_style(("sans-serif", 15)).axis_desc_style(("sans-serif", 17));
            style.x_label_formatter(&tick_text).y_label_formatter(&tick_text);
            if let Some((count, names)) = categories {
                style.x_labels(count).x_label_formatter(names).disable_x_mesh();
            }
            let _ = style.draw();
            draw(&mut chart);
            let _ = chart
                .configure_series_labels()
                .label_font(("sans-serif", 15))
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK.mix(0.3))
                .position(SeriesLabelPosition::UpperRight)
                .draw();
        }
        let _ = root.present();
    }
    Html(titled_svg(&svg, title, description))
}

/// Curves on shared axes: a title, axis labels, ticks and a legend.
///
/// ```
/// use transformer_anatomy::charts::{line_chart, Series};
///
/// let relu = Series { name: "ReLU", points: (-30..=30).map(|i| (i as f64 / 10.0, (i as f64 / 10.0).max(0.0))).collect() };
/// let svg = line_chart("ReLU", "x", "relu(x)", &[relu]);
/// assert!(svg.contains("<svg") && svg.contains("relu(x)"));
/// ```
pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> Html {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let description = format!("A line chart of {y_label} against {x_label}, one line each: {}.", names(series));
    framed((title, &description), (x_label, y_label), (range(xs), range(ys)), None, |chart| {
        for (i, s) in series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            if let Ok(drawn) = chart.draw_series(LineSeries::new(s.points.iter().copied(), colour.stroke_width(2))) {
                drawn
                    .label(s.name)
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], colour.stroke_width(2)));
            }
        }
    })
}

/// Points on shared axes, one colour per named group (e.g. two classes' features projected to 2-D),
/// with a title, labelled axes, ticks and a legend. Small translucent dots, so that dense regions show.
///
/// ```
/// use transformer_anatomy::charts::{scatter_chart, Series};
///
/// let a = Series { name: "ham", points: vec![(0.0, 1.0), (0.5, 0.8)] };
/// let b = Series { name: "spam", points: vec![(2.0, -1.0)] };
/// let svg = scatter_chart("Two groups", "first component", "second component", &[a, b]);
/// assert!(svg.contains("<circle") && svg.contains("spam") && svg.contains("second component"));
/// ```
pub fn scatter_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> Html {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let description = format!("A scatter plot of {y_label} against {x_label}, one colour each: {}.", names(series));
    framed((title, &description), (x_label, y_label), (range(xs), range(ys)), None, |chart| {
        for (i, s) in series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let dots = s.points.iter().map(move |&p| Circle::new(p, 2, colour.mix(0.5).filled()));
            if let Ok(drawn) = chart.draw_series(dots) {
                drawn.label(s.name).legend(move |(x, y)| Circle::new((x + 6, y), 4, colour.filled()));
            }
        }
    })
}

/// Groups of bars, one group per label and one bar per series (e.g. a target and a predicted
/// distribution over a small vocabulary).
pub fn bar_chart(title: &str, x_label: &str, y_label: &str, labels: &[&str], series: &[(&str, Vec<f64>)]) -> Html {
    let top = series.iter().flat_map(|s| s.1.iter().copied()).fold(0.0f64, f64::max).max(1e-9) * 1.1;
    let n = labels.len();
    let names: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
    let tick = move |x: &f64| {
        let i = x.floor() as usize;
        if (x - x.floor() - 0.5).abs() < 1e-6 && i < names.len() {
            names[i].clone()
        } else {
            String::new()
        }
    };
    let description = format!(
        "A bar chart of {y_label} for each {x_label} ({}), one bar each: {}.",
        labels.join(", "),
        series.iter().map(|s| s.0).collect::<Vec<_>>().join(", ")
    );
    framed((title, &description), (x_label, y_label), (0f64..n as f64, 0f64..top), Some((n * 2 + 1, &tick)), |chart| {
        let width = 0.8 / series.len().max(1) as f64;
        for (k, (name, values)) in series.iter().enumerate() {
            let colour = COLOURS[k % COLOURS.len()];
            let bars = values.iter().enumerate().map(move |(i, &v)| {
                let x0 = i as f64 + 0.1 + k as f64 * width;
                Rectangle::new([(x0, 0.0), (x0 + width, v)], colour.filled())
            });
            if let Ok(drawn) = chart.draw_series(bars) {
                drawn.label(*name).legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
            }
        }
    })
}

/// A heatmap's colours: for non-negative data white (0) to blue (`hi`); for signed data blue below 0 and
/// orange above, the scale symmetric about 0 (`lo` = −`hi`).
#[derive(Clone, Copy)]
struct ColourScale {
    lo: f64,
    hi: f64,
    signed: bool,
}

impl ColourScale {
    fn of(values: &[Vec<f64>]) -> Self {
        let (lo, hi) =
            values.iter().flatten().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let signed = lo < 0.0;
        let (lo, hi) = if signed { (-(lo.abs().max(hi.abs())), lo.abs().max(hi.abs())) } else { (0.0, hi.max(1e-12)) };
        ColourScale { lo, hi, signed }
    }

    fn colour(&self, v: f64) -> RGBColor {
        let mix = |a: (f64, f64, f64), t: f64| {
            let t = t.clamp(0.0, 1.0);
            RGBColor(
                (255.0 + (a.0 - 255.0) * t) as u8,
                (255.0 + (a.1 - 255.0) * t) as u8,
                (255.0 + (a.2 - 255.0) * t) as u8,
            )
        };
        if !self.signed {
            mix((37.0, 99.0, 235.0), v / self.hi)
        } else if v < 0.0 {
            mix((37.0, 99.0, 235.0), v / self.lo)
        } else {
            mix((234.0, 88.0, 12.0), v / self.hi)
        }
    }
}

/// A matrix as a heatmap with a title, axis labels, ticks (numbers, or the given row and column names,
/// e.g. tokens) and a colour scale beside it. Signed data (such as the positional encoding) gets a
/// diverging scale, blue below 0 and orange above; non-negative data (attention weights) white to blue.
/// With `annotate`, each cell also shows its value (for small matrices); in non-negative data a value of
/// exactly 0, a masked attention weight, is left blank.
pub fn heatmap(
    title: &str,
    (x_label, y_label): (&str, &str),
    matrix: &tch::Tensor,
    row_names: Option<&[String]>,
    column_names: Option<&[String]>,
    annotate: bool,
) -> anyhow::Result<Html> {
    anyhow::ensure!(matrix.dim() == 2, "a heatmap needs a 2-D tensor, got shape {:?}", matrix.size());
    let values = Vec::<Vec<f64>>::try_from(&matrix.to_kind(tch::Kind::Double))?;
    let (rows, cols) = (values.len(), values.first().map_or(0, Vec::len));
    anyhow::ensure!(rows > 0 && cols > 0, "a heatmap needs at least one row and one column");
    let scale = ColourScale::of(&values);
    // Wide enough to fill a notebook's output area (about 1,000 px) when there are many cells, so that
    // the text keeps its size instead of being scaled down.
    let width = (SIZE.0 as usize).max(140 + cols * if annotate { 52 } else { 14 }).min(1000) as u32;
    let height = (SIZE.1 as usize).max(120 + rows * if annotate { 36 } else { 10 }).min(900) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let root = root.titled(title, ("sans-serif", 22)).unwrap_or(root);
        let (main, bar) = root.split_horizontally(width - 110);
        heatmap_cells(&main, &values, (x_label, y_label), (row_names, column_names), annotate, scale);
        colour_bar(&bar, scale, column_names.is_some());
        let _ = root.present();
    }
    let description = format!(
        "A heatmap of {rows} by {cols} values, {y_label} down and {x_label} across; the scale beside it gives each \
         colour's value, from {} to {}.",
        tick_text(&scale.lo),
        tick_text(&scale.hi)
    );
    Ok(Html(titled_svg(&svg, title, &description)))
}

/// The heatmap's cells on `area`, row 0 at the top, with the axes' labels and ticks: every cell's for a
/// short axis, about ten otherwise, each a number or the given name. With `annotate`, each cell's value too.
fn heatmap_cells(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    values: &[Vec<f64>],
    (x_label, y_label): (&str, &str),
    (row_names, column_names): (Option<&[String]>, Option<&[String]>),
    annotate: bool,
    scale: ColourScale,
) {
    let (rows, cols) = (values.len(), values[0].len());
    let name =
        |names: Option<&[String]>, i: usize| names.and_then(|n| n.get(i)).cloned().unwrap_or_else(|| i.to_string());
    let every = |n: usize| if n <= 24 { 1 } else { n.div_ceil(10) };
    let (rstep, cstep) = (every(rows), every(cols));
    let x_tick = |x: &f64| {
        let i = x.floor() as usize;
        if (x - x.floor() - 0.5).abs() < 1e-6 && i < cols && i.is_multiple_of(cstep) {
            name(column_names, i)
        } else {
            String::new()
        }
    };
    let y_tick = |y: &f64| {
        let flipped = rows as f64 - y; // row 0 at the top
        let i = flipped.floor() as usize;
        if (flipped - flipped.floor() - 0.5).abs() < 1e-6 && i < rows && i.is_multiple_of(rstep) {
            name(row_names, i)
        } else {
            String::new()
        }
    };
    let chart = ChartBuilder::on(area)
        .margin(8)
        .x_label_area_size(if column_names.is_some() { 56 } else { 40 })
        .y_label_area_size(if row_names.is_some() { 80 } else { 56 })
        .build_cartesian_2d(0f64..cols as f64, 0f64..rows as f64);
    let Ok(mut chart) = chart else { return };
    let _ = chart
        .configure_mesh()
        .disable_mesh()
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .x_desc(x_label)
        .y_desc(y_label)
        .x_labels(cols * 2 + 1)
        .y_labels(rows * 2 + 1)
        .x_label_formatter(&x_tick)
        .y_label_formatter(&y_tick)
        .draw();
    let cells = values.iter().enumerate().flat_map(|(i, row)| {
        row.iter().enumerate().map(move |(j, &v)| {
            let y = (rows - i) as f64;
            Rectangle::new([(j as f64, y - 1.0), (j as f64 + 1.0, y)], scale.colour(v).filled())
        })
    });
    let _ = chart.draw_series(cells);
    if annotate {
        cell_values(&mut chart, values, scale.signed);
    }
}

/// Each cell's value, written on it. A weight of exactly 0 (a masked position: a softmax never gives 0
/// otherwise) is left blank in non-negative data, as printed attention weights leave the future blank; a
/// tiny weight still shows. A matrix of whole numbers (counts, such as a confusion matrix) shows them
/// whole, zeros too.
fn cell_values(chart: &mut Chart<'_, '_>, values: &[Vec<f64>], signed: bool) {
    let rows = values.len();
    let counts = values.iter().flatten().all(|v| v.fract() == 0.0);
    let labels = values.iter().enumerate().flat_map(|(i, row)| {
        row.iter().enumerate().filter(move |(_, &v)| signed || counts || v != 0.0).map(move |(j, &v)| {
            let style = ("sans-serif", 16).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Center));
            let text = if counts { format!("{v:.0}") } else { format!("{v:.2}") };
            Text::new(text, (j as f64 + 0.5, (rows - i) as f64 - 0.5), style)
        })
    });
    let _ = chart.draw_series(labels);
}

/// The colour scale on its own strip `bar`: a column of bands from the smallest value (bottom) to the
/// largest (top), with five labelled values beside it, drawn in the strip's pixel coordinates (its bottom
/// clear of the column names' longer axis area when `named_columns`).
fn colour_bar(bar: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>, scale: ColourScale, named_columns: bool) {
    let ColourScale { lo, hi, .. } = scale;
    let (_, strip_height) = bar.dim_in_pixel();
    let (top, bottom) = (16i32, strip_height as i32 - if named_columns { 72 } else { 56 });
    let bands = 64;
    for k in 0..bands {
        let (y0, y1) = (bottom - (bottom - top) * k / bands, bottom - (bottom - top) * (k + 1) / bands);
        let v = lo + (hi - lo) * (k as f64 + 0.5) / bands as f64;
        let _ = bar.draw(&Rectangle::new([(12, y1), (32, y0)], scale.colour(v).filled()));
    }
    let _ = bar.draw(&Rectangle::new([(12, top), (32, bottom)], BLACK.mix(0.4)));
    for k in 0..=4 {
        let y = bottom - (bottom - top) * k / 4;
        let v = lo + (hi - lo) * k as f64 / 4.0;
        let _ = bar.draw(&PathElement::new([(32, y), (36, y)], BLACK));
        let style = ("sans-serif", 15).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
        let _ = bar.draw(&Text::new(tick_text(&((v * 1000.0).round() / 1000.0)), (39, y), style));
    }
}

const BEAM_TREE_TITLE: &str = "Beam search: the beams kept after each step, and where outputs end";

/// Why the last column's open beams go no further: the search ends when as many outputs have ended as
/// the beam is wide and no open beam's sum is above theirs (those open beams are dropped), or at the
/// length limit (they end there, unfinished). `None` when no beam is left open.
fn why_the_search_ended(search: &BeamSearch) -> Option<String> {
    let open = search.steps.last().map_or(0, Vec::len);
    let ended_count: usize = search.ends.iter().map(Vec::len).sum();
    match (open, search.hypotheses.iter().any(|h| !h.finished)) {
        (0, _) => None,
        (_, true) => {
            Some(format!("The length limit ends the search: its {open} open beams count as unfinished outputs."))
        }
        (_, false) => Some(format!(
            "The search stops once {ended_count} outputs have ended and no open beam's sum is above theirs (it could \
             only fall): the {open} beams still open in the last column are dropped."
        )),
    }
}

/// The beam tree's words around its nodes on a `width` × `height` canvas: the title, what the columns are
/// (above the `caption` of `why` the search ended, if any), what the rows are (centred at `middle`), and
/// the start token at the height `start` of the first row.
fn beam_tree_labels((width, height): (f64, f64), why: Option<&str>, middle: f64, start: f64) -> Markup {
    let caption = if why.is_some() { 22.0 } else { 0.0 };
    html! {
        text x=(width / 2.0) y="20" text-anchor="middle" font-size="17" { (BEAM_TREE_TITLE) }
        text x=(width / 2.0) y=(height - 8.0 - caption) text-anchor="middle" font-size="13" fill="#334155" {
            "step (one column per token written); blue: the best output"
        }
        @if let Some(why) = why {
            text x=(width / 2.0) y=(height - 8.0) text-anchor="middle" font-size="13" fill="#334155" { (why) }
        }
        text transform={ "translate(14 " (middle) ") rotate(-90)" } text-anchor="middle" font-size="13" fill="#334155" {
            "beams, best first"
        }
        text x="38" y=(start + 5.0) text-anchor="middle" font-weight="bold" { "<s>" }
    }
}

/// The beams after every step of a beam search as a tree: one column per step, one node per beam (its
/// token and summed log-probability) with an edge to the beam it extends, and below them the `</s>` that
/// ended an output at that step. The best output's path is drawn in blue to its end.
pub fn beam_tree(search: &BeamSearch, token: impl Fn(i64) -> String) -> Html {
    let (col, row, left, top) = (78.0, 40.0, 96.0, 62.0);
    let steps = search.steps.len().max(search.ends.len());
    let alive = |s: usize| search.steps.get(s).map_or(0, Vec::len);
    let ended = |s: usize| search.ends.get(s).map_or(&[][..], Vec::as_slice);
    let rows = (0..steps).map(|s| alive(s) + ended(s).len()).max().unwrap_or(1).max(1) as f64;
    let why = why_the_search_ended(search);
    let caption = if why.is_some() { 22.0 } else { 0.0 };
    let (width, height) = (left + col * (steps as f64 + 0.3), top + row * rows + 34.0 + caption);
    let best = best_path(search);
    let on_best = |s: usize, i: usize| best.get(s) == Some(&i);
    let x = |s: usize| left + col * s as f64;
    let y = |i: usize| top + row * (i as f64 + 0.5);
    // A node: the edge from its parent, its token (blue and bold on the best path) and its log-probability.
    let node = |(s, i): (usize, usize), parent: usize, text: &str, log_prob: f64, blue: bool| {
        let from_x = if s == 0 { 38.0 + 16.0 } else { x(s - 1) + 22.0 };
        let (stroke, weight) = if blue { ("#1d4ed8", 2.5) } else { ("#94a3b8", 1.0) };
        html! {
            line x1=(from_x) y1=(y(parent)) x2=(x(s) - 22.0) y2=(y(i)) stroke=(stroke) stroke-width=(weight) {}
            text x=(x(s)) y=(y(i) + 1.0) text-anchor="middle" font-weight=[blue.then_some("bold")]
                fill=[blue.then_some("#1d4ed8")] { (text) }
            text x=(x(s)) y=(y(i) + 15.0) text-anchor="middle" font-size="12" fill="#334155" {
                (format!("{log_prob:.2}"))
            }
        }
    };
    let svg = html! {
        svg xmlns="http://www.w3.org/2000/svg" width=(width) height=(height) viewBox={ "0 0 " (width) " " (height) }
            font-family="sans-serif" font-size="14" {
            (beam_tree_labels((width, height), why.as_deref(), top + row * rows / 2.0, y(0)))
            @for s in 0..steps {
                text x=(x(s)) y=(top - 12.0) text-anchor="middle" font-size="13" fill="#334155" { (s + 1) }
                @for (i, b) in search.steps.get(s).into_iter().flatten().enumerate() {
                    (node((s, i), b.parent, &token(b.token), b.log_prob, on_best(s, i)))
                }
                @for (k, e) in ended(s).iter().enumerate() {
                    (node((s, alive(s) + k), e.parent, "</s>", e.log_prob, on_best(s, alive(s) + k)))
                }
            }
        }
    };
    Html(titled_svg(
        &svg.0,
        BEAM_TREE_TITLE,
        "Each column is a step of the beam search and each node a hypothesis, its token and log-probability, \
         joined to the hypothesis it extends; the best output's path is drawn in blue and bold.",
    ))
}

/// The rows the best hypothesis passes through, one per step (an `</s>` row counts the alive beams
/// before it, as [`beam_tree`] draws them); empty when there is no hypothesis.
fn best_path(search: &BeamSearch) -> Vec<usize> {
    let Some(best) = search.hypotheses.first() else { return vec![] };
    let n = best.tokens.len();
    // Where the best output ends: its `</s>` at step n, or its beam at the last step when unfinished.
    let (mut row, mut parent) = if best.finished {
        let Some(k) = search.ends.get(n).and_then(|e| e.iter().position(|e| e.log_prob == best.log_prob)) else {
            return vec![];
        };
        (search.steps.get(n).map_or(0, Vec::len) + k, search.ends[n][k].parent)
    } else {
        let Some(i) =
            search.steps.get(n.wrapping_sub(1)).and_then(|b| b.iter().position(|b| b.log_prob == best.log_prob))
        else {
            return vec![];
        };
        (i, search.steps[n - 1][i].parent)
    };
    let last = if best.finished { n } else { n - 1 };
    let mut path = vec![0; last + 1];
    path[last] = row;
    for s in (0..last).rev() {
        row = parent;
        path[s] = row;
        parent = search.steps[s][row].parent;
    }
    path
}
