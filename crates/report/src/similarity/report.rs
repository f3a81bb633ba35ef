//! The similarity report of a class (`anatomy exercises similarity CLASS`): the pairs of students whose
//! files match beyond what the stub, the reference solution and the task force on everyone (see
//! [`super`] for the method), as Markdown, JSON lines or a page with the two files side by side.

use anyhow::{bail, Result};

use super::{Entry, Evidence, Pair};
use crate::{handin, Exercise};
use maud::{html, Markup, PreEscaped, DOCTYPE};

/// What the report is made from.
pub struct Report {
    pub pairs: Vec<Pair>,
    /// Each exercise's files, by student, for the side-by-side view.
    files: Vec<(&'static str, Vec<Entry>)>,
    /// Files not compared, with why (a link, not a regular file, …).
    pub skipped: Vec<String>,
    pub students: usize,
}

/// Compares every chosen exercise's files across the class. A file that is still the stub is left out
/// (nothing was written); a file that cannot be read as a hand-in is listed in `skipped`.
pub fn compare(
    students: &[(String, std::path::PathBuf)],
    chosen: &[&'static Exercise],
    threshold: f64,
) -> Result<Report> {
    let mut skipped = Vec::new();
    let mut texts = Vec::new();
    for &e in chosen {
        let mut files = Vec::new();
        for (who, folder) in students {
            let Some(file) = handin::find(folder, e.name) else { continue };
            match handin::read_code(&file, e).map(String::from_utf8) {
                Ok(Ok(text)) => files.push(Text { student: who.clone(), text, shown: file.display().to_string() }),
                Ok(Err(_)) => skipped.push(format!("{}: not UTF-8 text", file.display())),
                Err(why) => skipped.push(why),
            }
        }
        texts.push((e, files));
    }
    compare_texts(texts, students.len(), threshold, skipped)
}

/// A student's file for one exercise, already read: whose, its text, and where it came from (for a
/// message).
pub struct Text {
    pub student: String,
    pub text: String,
    pub shown: String,
}

/// The comparison of [`compare`] on files already read (a gradebook keeps the files it graded), each
/// exercise with its students' texts; `skipped` holds what could not be read.
pub fn compare_texts(
    texts: Vec<(&'static Exercise, Vec<Text>)>,
    students: usize,
    threshold: f64,
    skipped: Vec<String>,
) -> Result<Report> {
    if !(0.0..=1.0).contains(&threshold) {
        bail!("--threshold must lie between 0 and 1 (a share of fingerprints), not {threshold}");
    }
    let mut report = Report { pairs: Vec::new(), files: Vec::new(), skipped, students };
    for (e, files) in texts {
        // A notebook's solution cell, as released and as solved by the instructor, is base code too.
        let cells = handin::solution_cell_files(e);
        let mut entries = Vec::new();
        for Text { student, text, shown } in files {
            if text == e.stub || cells.contains(&text) {
                continue;
            }
            match anatomy_intake::bounds::check_text(&text) {
                Ok(Some(b)) => report.skipped.push(format!("{shown}:{}: {}", b.line, b.message)),
                _ => entries.push(Entry { student, text }),
            }
        }
        let reference = std::fs::read_to_string(e.solution_file()).unwrap_or_default();
        let mut base = vec![e.stub, reference.as_str()];
        base.extend(cells.iter().map(String::as_str));
        report.pairs.extend(super::compare(e.name, &entries, &base, threshold));
        report.files.push((e.name, entries));
    }
    Ok(report)
}

impl Report {
    /// Markdown: one section per exercise with pairs, each with its score and matching lines.
    /// The closing line: how much was compared, how many pairs were found and how many of them are weak.
    pub fn closing_line(&self, exercises: usize, threshold: f64) -> String {
        let weak = self.pairs.iter().filter(|p| p.evidence == super::Evidence::Weak).count();
        let weak = match weak {
            0 => String::new(),
            n => format!(
                ", {n} of them weak evidence (they share no more than one whole answer holds: the exercise is too short \
                 to tell)"
            ),
        };
        format!(
            "compared {} students × {exercises} exercises: {} pairs at or above {threshold:.2}{weak}",
            self.students,
            self.pairs.len()
        )
    }

    pub fn markdown(&self) -> String {
        let mut text = String::new();
        for (exercise, _) in &self.files {
            let pairs: Vec<&Pair> = self.pairs.iter().filter(|p| p.exercise == *exercise).collect();
            if pairs.is_empty() {
                continue;
            }
            text += &format!(
                "## `{exercise}`\n\n| students | score | shared | evidence | matching lines |\n|---|---|---|---|---|\n"
            );
            for p in pairs {
                let lines: Vec<String> =
                    p.regions.iter().map(|[a, b]| format!("{}–{} ↔ {}–{}", a[0], a[1], b[0], b[1])).collect();
                text += &format!(
                    "| {} and {} | {:.2} | {} | {} | {} |\n",
                    anatomy_intake::names::markdown(&p.students[0]),
                    anatomy_intake::names::markdown(&p.students[1]),
                    p.score,
                    p.shared,
                    evidence_words(p),
                    lines.join(", ")
                );
            }
            text += "\n";
        }
        if text.is_empty() {
            text = "No two students' files match beyond the stub, the reference solution and what the task forces on everyone.\n".into();
        }
        text
    }

    /// One JSON object per pair.
    pub fn json_lines(&self) -> Result<String> {
        let mut text = String::new();
        for p in &self.pairs {
            text += &serde_json::to_string(p)?;
            text.push('\n');
        }
        Ok(text)
    }

    /// A page with each pair's two files side by side, the matching lines marked. Every text (names, the
    /// files' lines) goes through maud, which escapes it where it lands.
    pub fn html(&self, class: &str) -> String {
        let page = html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    title { "Similarity report: " (class) }
                    style { (PreEscaped(STYLE)) }
                }
                body {
                    h1 { "Similarity report" }
                    p {
                        (self.students) " students; pairs whose files share fingerprints beyond the stub, the \
                         reference solution and what more than half the class wrote (score: shared over all \
                         fingerprints of either, 0 to 1). Marked lines match."
                    }
                    @if self.pairs.is_empty() { p { "No pair reaches the threshold." } }
                    @for p in &self.pairs { (self.pair(p)) }
                }
            }
        };
        page.into_string() + "\n"
    }

    /// One pair: its heading, its evidence and the two files side by side.
    fn pair(&self, p: &Pair) -> Markup {
        let entries = &self.files.iter().find(|(e, _)| *e == p.exercise).expect("compared").1;
        let text_of = |who: &str| entries.iter().find(|e| e.student == who).map(|e| e.text.as_str()).unwrap_or("");
        html! {
            h2 {
                code { (p.exercise) } ": " (p.students[0]) " and " (p.students[1]) " — score "
                (format!("{:.2}", p.score)) " (" (p.shared) " shared fingerprints)"
            }
            p { "Evidence: " (evidence_words(p)) "." }
            table.files { tr {
                @for (side, who) in p.students.iter().enumerate() {
                    @let marked: Vec<[usize; 2]> = p.regions.iter().map(|r| r[side]).collect();
                    // A pane that scrolls sideways is reached with Tab, so the keyboard can scroll it too.
                    td { pre tabindex="0" {
                        b { (who) } "\n"
                        @for (n, line) in text_of(who).lines().enumerate() {
                            @let number = n + 1;
                            @let body = html! { span.n { (format!("{number:>3}")) } " " (line) };
                            @if marked.iter().any(|[from, to]| (*from..=*to).contains(&number)) {
                                mark { (body) } "\n"
                            } @else {
                                (body) "\n"
                            }
                        }
                    } }
                }
            } }
        }
    }
}

const STYLE: &str =
    "body{font-family:sans-serif;margin:2em} table.files{width:100%;border-collapse:collapse;table-layout:fixed} \
table.files td{vertical-align:top;width:50%;border:1px solid #ccc;padding:0;overflow:hidden} \
pre{margin:0;padding:.5em;font-size:13px;overflow-x:auto} mark{background:#ffe08a;display:inline-block;width:100%} \
.n{color:#595959;user-select:none} pre:focus{outline:2px solid #1e40af}";

/// What a pair's score can say, in words for the table and the page.
fn evidence_words(p: &Pair) -> String {
    match p.evidence {
        Evidence::Strong => "strong".into(),
        Evidence::Weak => format!(
            "weak: they share {} fingerprints, no more than one whole answer to this exercise holds ({}); its answers \
             are too short for a score to tell a copy from two students who wrote the same natural code",
            p.shared, p.answer
        ),
    }
}
