//! # An exercise checked inside a notebook
//!
//! The homework notebook (`notebooks/homework-cross-attention.ipynb`) ends with a locked check cell that
//! calls [`check`] on the function the learner wrote a few cells above. The check is the grader's own
//! (`checks::NAME`), run here in the learner's kernel on the learner's own code — nothing to sandbox —
//! and the verdict comes back as a small card: passed, not done, or the named mistake with the first
//! hint and the others folded away. The grader does not trust this cell: it grades the solution cell's
//! code, extracted from the notebook, in its sandbox (see `anatomy_grade::handin`).
use maud::{html, Markup};

use crate::checks::CheckResult;
use anatomy_course::{find, Status};

use crate::run_check;

/// What a check cell shows: the exercise, the status, the check's message and the hints.
#[derive(Debug, Clone)]
pub struct CheckCell {
    pub exercise: &'static str,
    pub status: Status,
    pub message: String,
    pub hints: Vec<String>,
    /// What the grader refuses in this exercise beyond the check (libtorch's finished operation).
    pub refused: Vec<&'static str>,
}

/// Runs exercise `name`'s check on the learner's function (`check` calls `checks::NAME` with it). A
/// `todo!()` still in the body is "not done", any other panic a failure with its message.
pub fn check(name: &str, check: impl FnOnce() -> CheckResult) -> CheckCell {
    let exercise = find(name).unwrap_or_else(|e| panic!("{e}"));
    let checked = run_check(check);
    CheckCell {
        exercise: exercise.name,
        status: checked.status,
        message: checked.message,
        hints: exercise.hint_levels(),
        refused: exercise.forbids.iter().map(|f| f.what).collect(),
    }
}

impl CheckCell {
    /// The first line: ✓, · or ✗, the exercise, what happened.
    pub fn headline(&self) -> String {
        match self.status {
            Status::Passed => format!("✓ {} passes its check", self.exercise),
            Status::NotDone => {
                format!(
                    "· {} is not done yet: replace the todo!() in the solution cell, run it, then this cell",
                    self.exercise
                )
            }
            Status::Failed | Status::DoesNotCompile => format!("✗ {} does not pass yet", self.exercise),
        }
    }

    /// The grader's words on what it refuses, for an exercise that forbids a finished operation.
    fn refusal_note(&self) -> Option<String> {
        (!self.refused.is_empty()).then(|| {
            format!(
                "When it is graded, the solution cell is compiled on its own and refused if it calls {}: write \
                 the step with tensor operations.",
                self.refused.join(" or ")
            )
        })
    }

    /// The card as HTML: the headline, the check's message, the first hint, the others folded.
    pub fn to_html(&self) -> String {
        let colour = match self.status {
            Status::Passed => "#1b7f3b",
            Status::NotDone => "#6b6b6b",
            _ => "#b3261e",
        };
        let card = html! {
            div style={ "border-left:4px solid " (colour) ";padding:4px 10px;font-family:sans-serif" } {
                p style={ "color:" (colour) ";font-weight:bold;margin:2px 0" } { (self.headline()) }
                @if self.status != Status::Passed {
                    // "not done yet" alone says no more than the headline; what todo!() said, if anything, does.
                    @if self.message != "not done yet" {
                        pre style="white-space:pre-wrap;margin:4px 0" { (self.message) }
                    }
                    @if let Some((first, rest)) = self.hints.split_first() {
                        p style="margin:4px 0" { b { "Hint 1." } " " (inline_markdown(first)) }
                        @if !rest.is_empty() {
                            details {
                                summary { "More hints, one at a time" }
                                @for (i, hint) in rest.iter().enumerate() {
                                    details style="margin-left:1em" {
                                        summary { "Hint " (i + 2) }
                                        p { (inline_markdown(hint)) }
                                    }
                                }
                            }
                        }
                    }
                }
                @if let Some(note) = self.refusal_note() {
                    p style="margin:4px 0;color:#555" { (note) }
                }
            }
        };
        card.into_string()
    }

    /// Shows the card when it is a notebook cell's value (evcxr's display protocol, which `evcxr_runtime`
    /// also prints), with the text beside it for a plain terminal.
    pub fn evcxr_display(&self) {
        println!("EVCXR_BEGIN_CONTENT text/html\n{}\nEVCXR_END_CONTENT", self.to_html());
        println!("EVCXR_BEGIN_CONTENT text/plain\n{self}\nEVCXR_END_CONTENT");
    }
}

impl std::fmt::Display for CheckCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}", self.headline())?;
        if self.status != Status::Passed {
            writeln!(f, "{}", self.message)?;
            if let Some(first) = self.hints.first() {
                writeln!(f, "Hint 1. {first}")?;
            }
        }
        if let Some(note) = self.refusal_note() {
            writeln!(f, "{note}")?;
        }
        Ok(())
    }
}

/// A hint as the hint files write it, in HTML: `code` spans and *emphasis* (the only Markdown they use),
/// everything escaped.
fn inline_markdown(s: &str) -> Markup {
    html! {
        @for (i, part) in s.split('`').enumerate() {
            @if i % 2 == 1 {
                code { (part) }
            } @else {
                @for (j, text) in part.split('*').enumerate() {
                    @if j % 2 == 1 && !text.is_empty() { em { (text) } } @else { (text) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Tensor;
    use transformer_anatomy::exercises::support::Projections;

    fn unscaled(d: &Tensor, e: &Tensor, p: &Projections, pad: Option<&Tensor>) -> (Tensor, Tensor) {
        use tch::nn::Module;
        let (q, k, v) = (p.query.forward(d), p.key.forward(e), p.value.forward(e));
        let mut scores = q.bmm(&k.transpose(1, 2));
        if let Some(pad) = pad {
            scores = scores.masked_fill(&pad.eq(0).unsqueeze(1), f64::NEG_INFINITY);
        }
        let w = scores.softmax(-1, scores.kind());
        (w.bmm(&v), w)
    }

    #[test]
    fn the_card_names_the_mistake_and_folds_all_hints_but_the_first() {
        let v = check("cross_attention", || crate::checks::cross_attention(&unscaled));
        assert_eq!(v.status, Status::Failed);
        assert!(v.message.contains("the scores are not scaled"), "{}", v.message);
        let html = v.to_html();
        assert!(html.contains("✗ cross_attention does not pass yet"));
        assert!(html.contains("<b>Hint 1.</b> Three projections"));
        assert!(html.contains("<code>projections.query.forward(decoder_states)</code>"), "{html}");
        assert!(html.contains("the <em>head</em> dimension"), "{html}");
        assert_eq!(html.matches("<summary>Hint ").count(), v.hints.len() - 1);
        assert!(html.contains("libtorch's finished attention"), "{html}");
        let todo = check("cross_attention", || crate::checks::cross_attention(&|_, _, _, _| todo!()));
        assert_eq!(todo.status, Status::NotDone);
        assert!(todo.to_string().starts_with("· cross_attention is not done yet"));
        assert!(!todo.to_html().contains("<pre"), "the headline says it all");
    }

    #[test]
    fn the_card_escapes_a_hostile_message_and_hint() {
        let hostile = "</script><script>alert(1)</script>";
        let v = CheckCell {
            exercise: "cross_attention",
            status: Status::Failed,
            message: format!("{hostile} \"quoted\""),
            hints: vec![format!("`{hostile}` and *{hostile}* and {hostile}")],
            refused: vec![],
        };
        let escaped = "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;";
        let html = v.to_html();
        assert!(html.contains(&format!(">{escaped} &quot;quoted&quot;</pre>")), "{html}");
        assert!(html.contains(&format!("<code>{escaped}</code> and <em>{escaped}</em> and {escaped}</p>")), "{html}");
        assert!(!html.contains("<script"), "{html}");
    }
}
