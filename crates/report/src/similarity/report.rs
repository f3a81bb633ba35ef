//! The similarity report of a class (`anatomy exercises similarity CLASS`): the pairs of students whose
//! files match beyond what the stub, the reference solution and the task force on everyone (see
//! [`super`] for the method), as Markdown, JSON lines or a page with the two files side by side.

use anyhow::{bail, Result};

use anatomy_course::Exercise;
use anatomy_grade::handin;

use anatomy_intake::similarity::{Evidence, Pair, StudentFile};
use maud::{html, Markup, PreEscaped, DOCTYPE};

/// What the report is made from.
pub struct SimilarityReport {
    pub pairs: Vec<Pair>,
    /// Each exercise's files, by student, for the side-by-side view.
    files: Vec<(&'static str, Vec<StudentFile>)>,
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
) -> Result<SimilarityReport> {
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
) -> Result<SimilarityReport> {
    if !(0.0..=1.0).contains(&threshold) {
        bail!("--threshold must lie between 0 and 1 (a share of fingerprints), not {threshold}");
    }
    let mut report = SimilarityReport { pairs: Vec::new(), files: Vec::new(), skipped, students };
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
                _ => entries.push(StudentFile { student, text }),
            }
        }
        let reference = std::fs::read_to_string(e.solution_file()).unwrap_or_default();
        let mut base = vec![e.stub, reference.as_str()];
        base.extend(cells.iter().map(String::as_str));
        report.pairs.extend(anatomy_intake::similarity::compare(e.name, &entries, &base, threshold));
        report.files.push((e.name, entries));
    }
    Ok(report)
}

impl SimilarityReport {
    /// Markdown: one section per exercise with pairs, each with its score and matching lines.
    /// The closing line: how much was compared, how many pairs were found and how many of them are weak.
    pub fn closing_line(&self, exercises: usize, threshold: f64) -> String {
        let weak = self.pairs.iter().filter(|p| p.evidence == anatomy_intake::similarity::Evidence::Weak).count();
        let weak = match weak {
            0 => String::new(),
            n => format!(
                ", {n} of them weak evidence (they share no more than one whole answer holds: the exercise is too short \
                 to tell)"
            ),
        };
        format!(
            "compared {} × {}: {} at or above {threshold:.2}{weak}",
            crate::counted(self.students, "student"),
            crate::counted(exercises, "exercise"),
            crate::counted(self.pairs.len(), "pair")
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

#[cfg(test)]
mod tests {
    use super::*;
    use anatomy_course::find;

    fn pair(exercise: &str, students: [&str; 2], evidence: Evidence) -> Pair {
        Pair {
            exercise: exercise.into(),
            students: students.map(String::from),
            score: 0.756,
            shared: 14,
            regions: vec![[[1, 3], [2, 4]], [[7, 7], [9, 9]]],
            evidence,
            answer: 20,
        }
    }

    /// A report of two exercises, with the files the pairs name.
    fn report(pairs: Vec<Pair>) -> SimilarityReport {
        let entry = |student: &str, text: &str| StudentFile { student: student.into(), text: text.into() };
        let files = vec![
            (
                "layer_norm",
                vec![entry("a|b", "l1\nl2\nl3\nl4\n"), entry("<c>", "m1\nm2\nm3\nm4\nm5\nm6\nm7\nm8\nm9\n")],
            ),
            ("causal_mask", Vec::new()),
        ];
        SimilarityReport { pairs, files, skipped: Vec::new(), students: 3 }
    }

    #[test]
    fn the_closing_line_counts_the_pairs_and_says_how_many_are_weak() {
        assert_eq!(
            report(Vec::new()).closing_line(2, 0.5),
            "compared 3 students × 2 exercises: 0 pairs at or above 0.50"
        );
        let two = report(vec![
            pair("layer_norm", ["a|b", "<c>"], Evidence::Weak),
            pair("layer_norm", ["<c>", "d"], Evidence::Strong),
        ]);
        assert_eq!(
            two.closing_line(2, 0.456),
            "compared 3 students × 2 exercises: 2 pairs at or above 0.46, 1 of them weak evidence (they share no more \
             than one whole answer holds: the exercise is too short to tell)"
        );
    }

    #[test]
    fn the_markdown_has_a_section_per_exercise_with_pairs_escaping_names_and_listing_the_matching_lines() {
        assert_eq!(
            report(Vec::new()).markdown(),
            "No two students' files match beyond the stub, the reference solution and what the task forces on \
             everyone.\n"
        );
        let text = report(vec![pair("layer_norm", ["a|b", "<c>"], Evidence::Strong)]).markdown();
        assert_eq!(
            text,
            "## `layer_norm`\n\n| students | score | shared | evidence | matching lines |\n|---|---|---|---|---|\n\
             | a\\|b and \\<c\\> | 0.76 | 14 | strong | 1–3 ↔ 2–4, 7–7 ↔ 9–9 |\n\n"
        );
        let weak = report(vec![pair("layer_norm", ["a|b", "<c>"], Evidence::Weak)]).markdown();
        assert!(
            weak.contains(
                "| weak: they share 14 fingerprints, no more than one whole answer to this exercise holds (20); its \
                 answers are too short for a score to tell a copy from two students who wrote the same natural code |"
            ),
            "{weak}"
        );
    }

    #[test]
    fn json_lines_give_one_object_per_pair_and_the_page_marks_the_matching_lines_of_both_files() {
        let r = report(vec![pair("layer_norm", ["a|b", "<c>"], Evidence::Weak)]);
        let lines = r.json_lines().unwrap();
        assert_eq!(lines.lines().count(), 1);
        let read: serde_json::Value = serde_json::from_str(lines.trim_end()).unwrap();
        assert_eq!((read["evidence"].as_str(), read["shared"].as_u64()), (Some("weak"), Some(14)));
        assert_eq!(read["regions"], serde_json::json!([[[1, 3], [2, 4]], [[7, 7], [9, 9]]]));
        let html = r.html("week <3>");
        assert!(html.contains("<title>Similarity report: week &lt;3&gt;</title>"));
        assert!(html.contains("<b>&lt;c&gt;</b>") && !html.contains("<c>"), "names escaped");
        // Lines 1–3 of the first file and 2–4 and 9 of the second are marked: 3 + 4 marks.
        assert_eq!(html.matches("<mark>").count(), 7, "{html}");
        assert!(html.contains("<mark><span class=\"n\">  9</span> m9</mark>"), "{html}");
        assert!(html.contains("<span class=\"n\">  4</span> l4\n"), "line 4 of the first file is not marked");
        assert!(report(Vec::new()).html("c").contains("No pair reaches the threshold."));
    }

    #[test]
    fn a_threshold_outside_zero_to_one_is_refused_and_an_untouched_stub_is_not_compared() {
        let e = find("layer_norm").unwrap();
        for threshold in [-0.1, 1.5, f64::NAN] {
            let refused = compare_texts(Vec::new(), 0, threshold, Vec::new()).err().unwrap().to_string();
            assert!(refused.starts_with("--threshold must lie between 0 and 1"), "{refused}");
        }
        let stub =
            |student: &str| Text { student: student.into(), text: e.stub.into(), shown: format!("{student}.rs") };
        let report =
            compare_texts(vec![(e, vec![stub("a"), stub("b")])], 2, 0.5, vec!["kept.rs: a link".into()]).unwrap();
        assert!(report.pairs.is_empty());
        assert_eq!(report.files.len(), 1);
        assert!(report.files[0].1.is_empty(), "the stubs are nothing written");
        assert_eq!((report.skipped, report.students), (vec!["kept.rs: a link".to_string()], 2));
    }
}
