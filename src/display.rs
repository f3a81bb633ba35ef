//! # Rich display for notebooks
//!
//! In an evcxr (Rust) Jupyter notebook, the value of a cell's last line is shown by calling its
//! `evcxr_display` method when it has one. The types a learner looks at get one here: a tensor shows
//! its shape, dtype, device and a small table of values; a [`BertConfig`] a two-column table; attention
//! weights a heatmap with the tokens on both axes; a mask a 0/1 grid. Everything is self-contained
//! HTML/SVG in colours that read on light and dark themes. In a terminal the usual `{}`/`{:?}` output
//! remains. Bring [`Rich`] into scope (`use transformer_anatomy::display::Rich;`) to display tensors.
use maud::html;
use tch::{Kind, Tensor};

use crate::config::BertConfig;
use crate::html::Html;
use crate::overview::Branch;

const STYLE: &str = "font-family: ui-monospace, monospace; font-size: 12px; border-collapse: collapse;";
const CELL: &str = "padding: 1px 6px; text-align: right; border: 1px solid rgba(127,127,127,0.3);";

/// Rich notebook output for types from other crates (tensors).
pub trait Rich {
    /// The HTML a notebook shows.
    fn to_html(&self) -> Html;
    /// Called by evcxr for a cell's final value.
    fn evcxr_display(&self) {
        self.to_html().evcxr_display();
    }
}

/// At most this many rows and columns of a tensor's last two axes are shown.
const SHOWN: i64 = 8;

impl Rich for Tensor {
    fn to_html(&self) -> Html {
        tensor_table(self, None)
    }
}

/// A tensor as a small table: its shape, dtype and device, then a window of at most 8 × 8 values of its
/// last two axes (leading axes at index 0), with numbered columns, rows named by `row_names` (tokens,
/// say) where given, and a note of how much of the tensor the window shows ("8 of 768 columns").
pub fn tensor_table(t: &Tensor, row_names: Option<&[String]>) -> Html {
    table(t, row_names, None)
}

/// [`tensor_table`] with the columns named too: for a `[query, key]` table of scores or weights, the
/// query tokens down the side and the key tokens across the top, where numbered columns would leave the
/// reader counting tokens.
pub fn token_table(t: &Tensor, row_names: &[String], column_names: &[String]) -> Html {
    table(t, Some(row_names), Some(column_names))
}

fn table(t: &Tensor, row_names: Option<&[String]>, column_names: Option<&[String]>) -> Html {
    let mut view = t.shallow_clone();
    let mut leading = Vec::new();
    while view.dim() > 2 {
        view = view.get(0);
        leading.push("0");
    }
    if view.dim() == 1 {
        view = view.unsqueeze(0);
    }
    // The window of the last two axes: its values, and how much of the tensor they are.
    let window = (view.dim() == 2 && view.numel() > 0).then(|| {
        let (rows, cols) = (view.size()[0], view.size()[1]);
        let (shown_rows, shown_cols) = (rows.min(SHOWN), cols.min(SHOWN));
        let window = view.narrow(0, 0, shown_rows).narrow(1, 0, shown_cols).to_kind(Kind::Double);
        Vec::<Vec<f64>>::try_from(&window).ok().map(|values| (values, (rows, cols), (shown_rows, shown_cols)))
    });
    let name =
        |names: Option<&[String]>, i: usize| names.and_then(|n| n.get(i)).map_or_else(|| i.to_string(), Clone::clone);
    html! {
        div style=(STYLE) {
            div {
                "Tensor " b { (format!("{:?}", t.size())) }
                " · " (format!("{:?}", t.kind())) " · " (format!("{:?}", t.device()))
            }
            @if let Some(Some((values, (rows, cols), (shown_rows, shown_cols)))) = window {
                div {
                    "showing " (shown_rows) " of " (rows) " rows and " (shown_cols) " of " (cols) " columns"
                    @if !leading.is_empty() { " at index [" (leading.join(", ")) ", …]" }
                }
                table style="border-collapse: collapse" {
                    tr {
                        th {}
                        @for j in 0..shown_cols as usize {
                            th style=(CELL) { (name(column_names, j)) }
                        }
                    }
                    @for (i, row) in values.iter().enumerate() {
                        tr {
                            th style=(CELL) { (name(row_names, i)) }
                            @for v in row {
                                td style=(CELL) { (crate::inspect::format_value(*v)) }
                            }
                            @if cols > SHOWN {
                                td style=(CELL) { "…" }
                            }
                        }
                    }
                    @if rows > SHOWN {
                        tr { th style=(CELL) { "⋮" } }
                    }
                }
            } @else if view.dim() == 0 {
                div { (crate::inspect::format_value(view.double_value(&[]))) }
            }
        }
    }
    .into()
}

impl BertConfig {
    /// The configuration as a two-column table.
    pub fn to_html(&self) -> Html {
        let json = serde_json::to_value(self).expect("a config serializes");
        html! {
            table style=(STYLE) {
                tr { th style=(CELL) { "field" } th style=(CELL) { "value" } }
                @for (key, value) in json.as_object().into_iter().flatten() {
                    tr {
                        td style={ (CELL) "; text-align:left" } { (key) }
                        td style=(CELL) { (value.to_string()) }
                    }
                }
            }
        }
        .into()
    }

    /// Called by evcxr for a cell's final value.
    pub fn evcxr_display(&self) {
        self.to_html().evcxr_display();
    }
}

/// A self-attention weight matrix `[seq, seq]` as a heatmap: query tokens down the side (the token
/// that attends), key tokens along the bottom (the token attended to), the weight printed in each cell
/// of a small matrix, and a colour scale.
pub fn attention_heatmap(weights: &Tensor, query_tokens: &[String], key_tokens: &[String]) -> Html {
    let axes = ("key: the token attended to", "query: the token attending");
    weights_heatmap("Self-attention weights: each row sums to 1", axes, weights, query_tokens, key_tokens)
}

/// An encoder-decoder (cross-) attention weight matrix `[target_len, source_len]` as a heatmap: the
/// target tokens the decoder writes down the side, the source tokens it reads along the bottom.
pub fn cross_attention_heatmap(weights: &Tensor, target_tokens: &[String], source_tokens: &[String]) -> Html {
    let axes = ("source token (key): what the decoder reads", "target token (query): what the decoder writes");
    let title = "Encoder-decoder attention: each target row sums to 1 over the source";
    weights_heatmap(title, axes, weights, target_tokens, source_tokens)
}

fn weights_heatmap(title: &str, axes: (&str, &str), weights: &Tensor, rows: &[String], columns: &[String]) -> Html {
    let small = weights.size().iter().product::<i64>() <= 400;
    crate::charts::heatmap(title, axes, weights, Some(rows), Some(columns), small)
        .unwrap_or_else(|e| html! { p { "no picture: " (format!("{e:#}")) } }.into())
}

/// A mask as a grid of 0s and 1s (1 = may attend), shaded where attention is allowed.
pub fn mask_grid(mask: &Tensor) -> Html {
    let rows = Vec::<Vec<f64>>::try_from(&mask.to_kind(Kind::Double)).unwrap_or_default();
    html! {
        table style=(STYLE) {
            caption style="text-align:left" { "mask: row = query position, column = key position, 1 = may attend" }
            @for row in rows {
                tr {
                    @for v in row {
                        @let shade = if v != 0.0 { "background: rgba(59,130,246,0.45);" } else { "" };
                        td style={ (CELL) " " (shade) " text-align:center; width: 1.6em" } {
                            (if v != 0.0 { 1 } else { 0 })
                        }
                    }
                }
            }
        }
    }
    .into()
}

/// One model of the transformer family tree: the data behind [`transformer_families`].
pub struct FamilyMember {
    pub model: &'static str,
    pub branch: Branch,
    pub year: u16,
    pub key_idea: &'static str,
}

/// A few landmark models of each branch, with what each added (in our own words).
pub const FAMILY: &[FamilyMember] = &[
    FamilyMember {
        model: "Transformer",
        branch: Branch::EncoderDecoder,
        year: 2017,
        key_idea: "attention alone, no recurrence, for translation",
    },
    FamilyMember {
        model: "GPT",
        branch: Branch::Decoder,
        year: 2018,
        key_idea: "pretrain a causal language model, then fine-tune",
    },
    FamilyMember {
        model: "BERT",
        branch: Branch::Encoder,
        year: 2018,
        key_idea: "predict masked tokens from both sides",
    },
    FamilyMember {
        model: "GPT-2",
        branch: Branch::Decoder,
        year: 2019,
        key_idea: "a larger model and corpus: tasks without fine-tuning",
    },
    FamilyMember {
        model: "RoBERTa",
        branch: Branch::Encoder,
        year: 2019,
        key_idea: "BERT trained longer, on more data, without next-sentence prediction",
    },
    FamilyMember {
        model: "DistilBERT",
        branch: Branch::Encoder,
        year: 2019,
        key_idea: "a smaller student trained to imitate BERT",
    },
    FamilyMember {
        model: "T5",
        branch: Branch::EncoderDecoder,
        year: 2019,
        key_idea: "every task as text in, text out",
    },
    FamilyMember {
        model: "BART",
        branch: Branch::EncoderDecoder,
        year: 2019,
        key_idea: "learn to repair deliberately corrupted text",
    },
    FamilyMember {
        model: "MiniLM",
        branch: Branch::Encoder,
        year: 2020,
        key_idea: "distil the teacher's attention patterns into a small model",
    },
    FamilyMember {
        model: "GPT-3",
        branch: Branch::Decoder,
        year: 2020,
        key_idea: "scale; learn new tasks from a few examples in the prompt",
    },
    FamilyMember {
        model: "DeBERTa",
        branch: Branch::Encoder,
        year: 2020,
        key_idea: "separate content and relative-position attention",
    },
    FamilyMember {
        model: "XLM",
        branch: Branch::Encoder,
        year: 2019,
        key_idea: "many languages in one model; masked tokens across a sentence and its translation",
    },
    FamilyMember {
        model: "XLM-R",
        branch: Branch::Encoder,
        year: 2019,
        key_idea: "RoBERTa's recipe on web text in 100 languages, no translations needed",
    },
    FamilyMember {
        model: "ALBERT",
        branch: Branch::Encoder,
        year: 2019,
        key_idea: "fewer parameters: a small embedding, one set of weights shared by all layers",
    },
    FamilyMember {
        model: "ELECTRA",
        branch: Branch::Encoder,
        year: 2020,
        key_idea: "spot the tokens a small generator replaced: every position teaches",
    },
    FamilyMember {
        model: "CTRL",
        branch: Branch::Decoder,
        year: 2019,
        key_idea: "control codes at the start of the prompt steer style and topic",
    },
    FamilyMember {
        model: "GPT-Neo",
        branch: Branch::Decoder,
        year: 2021,
        key_idea: "an open re-creation of GPT-3's design at smaller sizes",
    },
    FamilyMember {
        model: "GPT-J",
        branch: Branch::Decoder,
        year: 2021,
        key_idea: "a 6-billion-parameter open GPT-style model",
    },
    FamilyMember {
        model: "M2M-100",
        branch: Branch::EncoderDecoder,
        year: 2020,
        key_idea: "translate directly between any two of 100 languages",
    },
    FamilyMember {
        model: "BigBird",
        branch: Branch::EncoderDecoder,
        year: 2020,
        key_idea: "sparse attention, so inputs can be thousands of tokens long",
    },
];

/// The family tree as a table, grouped by branch and ordered by year.
pub fn transformer_families() -> Html {
    let by_branch = Branch::ALL.map(|branch| {
        let mut members: Vec<&FamilyMember> = FAMILY.iter().filter(|m| m.branch == branch).collect();
        members.sort_by_key(|m| m.year);
        members
    });
    html! {
        table style=(STYLE) {
            tr {
                @for heading in ["branch", "year", "model", "key idea"] {
                    th style=(CELL) { (heading) }
                }
            }
            @for m in by_branch.iter().flatten() {
                tr {
                    td style={ (CELL) "; text-align:left" } { (m.branch.name()) }
                    td style=(CELL) { (m.year) }
                    td style={ (CELL) "; text-align:left" } { b { (m.model) } }
                    td style={ (CELL) "; text-align:left" } { (m.key_idea) }
                }
            }
        }
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_table_names_its_columns_and_a_tensor_table_numbers_them() {
        let t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]).view([2, 2]);
        let tokens = ["time".to_string(), "<b>".to_string()];
        let header = |html: &Html| {
            let start = html.0.find("<tr>").unwrap();
            html.0[start..start + html.0[start..].find("</tr>").unwrap()].to_string()
        };
        let named = token_table(&t, &tokens, &tokens);
        assert!(header(&named).contains(">time</th>") && header(&named).contains(">&lt;b&gt;</th>"));
        assert!(named.0.contains(r#"">time</th><td"#), "the rows keep their names");
        let numbered = tensor_table(&t, Some(&tokens));
        assert!(header(&numbered).contains(">0</th>") && !header(&numbered).contains(">time</th>"));
    }
}
