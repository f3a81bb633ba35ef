//! # Attention pictures
//!
//! Numbers in a `[layers, heads, seq, seq]` tensor are hard to read; a picture shows at a glance which
//! tokens a head connects. Three views, after the chapter's BertViz figures, drawn here as plain,
//! self-contained HTML and SVG (no network, no external script, readable on light and dark pages):
//!
//! * [`AttentionPicture::head_view`]: tokens on both sides, a line from each token (left) to every token
//!   it attends to (right), as dark as the weight; layer and head can be switched;
//! * [`AttentionPicture::model_view`]: every layer × head at once, each as a small heatmap;
//! * [`AttentionPicture::neuron_view`]: for one head and one token, the query, each key, their
//!   elementwise product, and the resulting weights — where the numbers come from.
//!
//! [`crate::charts::heatmap`] draws any matrix with axes and a colour scale (one head's weights, the
//! positional-encoding pattern).
use anyhow::{ensure, Result};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use serde::Serialize;
use tch::nn::Module;
use tch::{Kind, Tensor};

use crate::encoder_layer::AttentionBlock;
use crate::fused_attention::FusedMultiHeadAttention;
pub use crate::html::Html;
use crate::multi_head_attention::MultiHeadAttention;
use crate::pretrained::BertModel;

/// The data behind the pictures: tokens and every layer's attention for one sentence (or pair).
#[derive(Debug, Clone, Serialize)]
pub struct AttentionPicture {
    pub tokens: Vec<String>,
    /// Where the second text of a pair starts (its first token), if there is one.
    pub sentence_b_start: Option<usize>,
    /// `[layer][head][query][key]`
    pub attentions: Vec<Vec<Vec<Vec<f32>>>>,
}

/// For the neuron view: one head's queries and keys, `[seq][head_dim]` each.
#[derive(Debug, Clone)]
pub struct QueriesAndKeys {
    pub queries: Vec<Vec<f32>>,
    pub keys: Vec<Vec<f32>>,
}

impl QueriesAndKeys {
    /// From `[1, seq, head_dim]` tensors.
    pub fn from_tensors(queries: &Tensor, keys: &Tensor) -> Result<Self> {
        let rows =
            |t: &Tensor| -> Result<Vec<Vec<f32>>> { Ok(Vec::<Vec<f32>>::try_from(&t.get(0).to_kind(Kind::Float))?) };
        Ok(QueriesAndKeys { queries: rows(queries)?, keys: rows(keys)? })
    }
}

/// One head's queries and keys for a self-attention input `x` `[batch, seq, hidden]`,
/// `[batch, seq, head_dim]` each: what that head compares to get its scores. Only the neuron view needs
/// them, so they live here rather than in the [`Attention`](crate::Attention) trait the model runs on.
pub trait HeadQueriesKeys {
    fn queries_and_keys(&self, x: &Tensor, head: i64) -> (Tensor, Tensor);
}

impl HeadQueriesKeys for MultiHeadAttention {
    fn queries_and_keys(&self, x: &Tensor, head: i64) -> (Tensor, Tensor) {
        let head = &self.heads[head as usize];
        (head.query.forward(x), head.key.forward(x)) // [batch, seq, head_dim] each
    }
}

impl HeadQueriesKeys for FusedMultiHeadAttention {
    fn queries_and_keys(&self, x: &Tensor, head: i64) -> (Tensor, Tensor) {
        let d = self.head_dim; // head h owns columns h·d .. (h + 1)·d of the fused projections
        (self.query.forward(x).narrow(-1, head * d, d), self.key.forward(x).narrow(-1, head * d, d))
    }
}

impl HeadQueriesKeys for AttentionBlock {
    fn queries_and_keys(&self, x: &Tensor, head: i64) -> (Tensor, Tensor) {
        match self {
            AttentionBlock::PerHead(a) => a.queries_and_keys(x, head),
            AttentionBlock::Fused(a) => a.queries_and_keys(x, head),
        }
    }
}

impl BertModel {
    /// The queries and keys of one head in one layer, `[batch, seq, head_dim]` each: what that head
    /// compares to get its attention scores (`q · kᵀ / √head_dim`).
    pub fn queries_and_keys(
        &self,
        input_ids: &Tensor,
        token_type_ids: Option<&Tensor>,
        layer: usize,
        head: usize,
    ) -> Result<(Tensor, Tensor)> {
        let layers = &self.encoder.stack.layers;
        let (count, heads) = (layers.len(), self.config.num_attention_heads as usize);
        ensure!(layer < count, "layer {layer} does not exist: the model has layers 0..{}", count - 1);
        ensure!(head < heads, "head {head} does not exist: each layer has heads 0..{}", heads - 1);
        let _no_grad = tch::no_grad_guard();
        self.encoder.check_inputs(input_ids, token_type_ids, None)?;
        let mut x = self.encoder.embeddings.forward_with_types(input_ids, token_type_ids, false);
        for earlier in &layers[..layer] {
            x = earlier.forward(&x, None, false).hidden_state;
        }
        Ok(layers[layer].attention.queries_and_keys(&x, head as i64))
    }
}

const STYLE: &str = "font-family: system-ui, sans-serif; font-size: 13px; color: inherit;";
// Text in these colours reads at WCAG AA's 4.5:1 or more on white (8.7:1 and 5.0:1), and the two differ in
// grey (luminance 7 % and 16 %).
const BLUE: &str = "#1e40af";
const ORANGE: &str = "#b45309";
/// Secondary text: 7:1 on white (CSS's `gray` is 3.9:1, below WCAG AA).
const MUTED: &str = "#595959";
const RED: &str = "#ef4444";
/// The head view's own style: a token reached with Tab shows that it has the focus.
const HEAD_VIEW_STYLE: &str =
    ".anatomy-view .anatomy-from:focus { outline: 2px solid currentColor; outline-offset: 2px; font-weight: bold; }";

/// One head's score in [`AttentionPicture::rank_heads`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HeadScore {
    pub layer: usize,
    pub head: usize,
    /// The largest weight from an occurrence of the first token to an occurrence of the second.
    pub weight: f32,
}

impl AttentionPicture {
    /// Every head, ranked by how much the token `from` attends to the token `to` (the largest weight over
    /// their occurrences), strongest first. This is how to find, in a model other than the book's, the
    /// heads closest to one of the book's examples, such as "flies" attending to "arrow".
    pub fn rank_heads(&self, from: &str, to: &str) -> Result<Vec<HeadScore>> {
        let positions = |token: &str| -> Vec<usize> {
            self.tokens.iter().enumerate().filter(|(_, t)| *t == token).map(|(i, _)| i).collect()
        };
        let (froms, tos) = (positions(from), positions(to));
        ensure!(!froms.is_empty(), "{from:?} is not one of the tokens {:?}", self.tokens);
        ensure!(!tos.is_empty(), "{to:?} is not one of the tokens {:?}", self.tokens);
        let mut scores: Vec<HeadScore> = self
            .attentions
            .iter()
            .enumerate()
            .flat_map(|(layer, heads)| {
                let (froms, tos) = (&froms, &tos);
                heads.iter().enumerate().map(move |(head, rows)| {
                    let weight =
                        froms.iter().flat_map(|&i| tos.iter().map(move |&j| rows[i][j])).fold(0.0f32, f32::max);
                    HeadScore { layer, head, weight }
                })
            })
            .collect();
        scores.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        Ok(scores)
    }

    /// From the tokens and the model's per-layer attention tensors (`[1, heads, seq, seq]` each).
    pub fn new(tokens: Vec<String>, sentence_b_start: Option<usize>, attentions: &[Tensor]) -> Result<Self> {
        let attentions = attentions
            .iter()
            .map(|a| Ok(Vec::<Vec<Vec<f32>>>::try_from(&a.get(0).to_kind(Kind::Float))?))
            .collect::<Result<Vec<_>>>()?;
        let picture = AttentionPicture { tokens, sentence_b_start, attentions };
        ensure!(!picture.attentions.is_empty(), "there are no attention layers to draw");
        ensure!(
            picture.attentions.iter().flatten().all(|h| h.len() == picture.tokens.len()),
            "the attention matrices do not match the {} tokens",
            picture.tokens.len()
        );
        Ok(picture)
    }

    pub fn num_layers(&self) -> usize {
        self.attentions.len()
    }

    pub fn num_heads(&self) -> usize {
        self.attentions[0].len()
    }

    /// Checks that a layer and a head exist, with a message that says which do.
    pub fn check(&self, layer: usize, head: usize) -> Result<()> {
        ensure!(layer < self.num_layers(), "layer {layer} does not exist: choose 0..{}", self.num_layers() - 1);
        ensure!(head < self.num_heads(), "head {head} does not exist: choose 0..{}", self.num_heads() - 1);
        Ok(())
    }

    /// One head's weights, `[query][key]`.
    pub fn weights(&self, layer: usize, head: usize) -> &Vec<Vec<f32>> {
        &self.attentions[layer][head]
    }

    fn token_color(&self, i: usize) -> &'static str {
        match self.sentence_b_start {
            Some(b) if i >= b => ORANGE,
            _ => BLUE,
        }
    }

    /// The SVG of one head: tokens on the left attend to tokens on the right.
    fn head_svg(&self, layer: usize, head: usize) -> Markup {
        let n = self.tokens.len();
        let (row, top, width) = (20.0, 44.0, 420.0);
        let (left, right) = (150.0, 270.0);
        let height = top + row * n as f64 + 8.0;
        let y = |i: usize| top + row * (i as f64 + 0.5);
        html! {
            svg xmlns="http://www.w3.org/2000/svg" width=(width) height=(height)
                viewBox={ "0 0 " (width) " " (height) } class="anatomy-head" role="group"
                aria-label={ "attention of layer " (layer) ", head " (head) ": each token on the left, its lines to \
                             the tokens it attends to on the right" } {
                text x=(width / 2.0) y="14" text-anchor="middle" fill="currentColor" {
                    "layer " (layer) " · head " (head)
                }
                text x=(left) y="34" text-anchor="end" fill="#475569" font-size="13" { "attends from (query) →" }
                text x=(right) y="34" text-anchor="start" fill="#475569" font-size="13" { "→ to (key)" }
                g class="lines" {
                    @for (i, weights) in self.weights(layer, head).iter().enumerate() {
                        // Weights under 0.01 are invisible anyway; leaving them out keeps the file small.
                        @for (j, &w) in weights.iter().enumerate().filter(|(_, &w)| w >= 0.01) {
                            line x1=(left + 6.0) y1=(y(i)) x2=(right - 6.0) y2=(y(j)) stroke=(self.token_color(i))
                                stroke-width="2" stroke-opacity=(format!("{w:.3}")) data-from=(i) {}
                        }
                    }
                }
                @for (i, token) in self.tokens.iter().enumerate() {
                    text x=(left) y=(y(i) + 4.0) text-anchor="end" fill=(self.token_color(i)) class="anatomy-from"
                        data-i=(i) tabindex="0" role="button" aria-pressed="false" style="cursor:pointer" { (token) }
                    text x=(right) y=(y(i) + 4.0) text-anchor="start" fill=(self.token_color(i)) { (token) }
                }
            }
        }
    }

    /// A page (or notebook cell) with the head view of `layer`/`head`, and selectors that redraw it for
    /// any other layer and head from the data embedded in the page.
    pub fn head_view(&self, layer: usize, head: usize) -> Result<Html> {
        self.check(layer, head)?;
        // The data is JSON inside a <script>, which HTML does not unescape: a "</" in it (a token
        // "</script>") is written "<\/", which JSON reads as "</" and HTML as no end of the script.
        let data = serde_json::to_string(self)?.replace("</", "<\\/");
        let script = format!("\n{}{HEAD_VIEW_POINTER}}})();\n", head_view_redraw());
        Ok(html! {
            div class="anatomy-view" style=(STYLE) {
                "\n"
                style { (PreEscaped(HEAD_VIEW_STYLE)) }
                "\n" (self.head_view_controls(layer, head)) "\n"
                div class="anatomy-canvas" { (self.head_svg(layer, head)) }
                "\n"
                script type="application/json" class="anatomy-data" { (PreEscaped(data)) }
                "\n"
                script { (PreEscaped(script)) }
                "\n"
            }
        }
        .into())
    }

    /// The head view's selectors (the chosen layer and head selected), its key (sentence A, and B for a
    /// pair; the weight's scale) and what to do with it.
    fn head_view_controls(&self, layer: usize, head: usize) -> Markup {
        let options = |n: usize, chosen: usize| {
            html! {
                @for i in 0..n {
                    option value=(i) selected=[(i == chosen).then_some("selected")] { (i) }
                }
            }
        };
        html! {
            div {
                label { "layer " select class="anatomy-layer" { (options(self.num_layers(), layer)) } }
                " "
                label { "head " select class="anatomy-head-select" { (options(self.num_heads(), head)) } }
                "\n"
                span style={ "color:" (BLUE) } { "■ sentence A" }
                @if self.sentence_b_start.is_some() {
                    " " span style={ "color:" (ORANGE) } { "■ sentence B" }
                }
                "\n"
                span style="margin-left:1em" {
                    "weight "
                    svg width="120" height="12" style="vertical-align:middle" aria-hidden="true" {
                        defs {
                            linearGradient id="anatomy-weight" {
                                stop offset="0" stop-color=(BLUE) stop-opacity="0" {}
                                stop offset="1" stop-color=(BLUE) stop-opacity="1" {}
                            }
                        }
                        rect width="120" height="12" fill="url(#anatomy-weight)" stroke="gray" {}
                    }
                    " 0 → 1"
                }
                "\n"
                span style={ "margin-left:1em;color:" (MUTED) } {
                    "hover over a token on the left, or reach it with Tab, to see only its lines; click it, or \
                     press Enter or Space, to keep them"
                }
            }
        }
    }

    /// Every layer (rows) × head (columns) as a small heatmap: darker cells, more attention.
    pub fn model_view(&self) -> Html {
        html! {
            div class="anatomy-view" style=(STYLE) {
                div {
                    b { "Model view" }
                    ": every layer (rows) × head (columns); in each small square, rows are the tokens attending \
                     (queries), columns the tokens attended to (keys), darker = more weight"
                }
                table style="border-collapse: collapse" {
                    tr {
                        td {}
                        @for h in 0..self.num_heads() {
                            td style="text-align:center" { "head " (h) }
                        }
                    }
                    @for (l, heads) in self.attentions.iter().enumerate() {
                        tr {
                            td { "layer " (l) }
                            @for (h, weights) in heads.iter().enumerate() {
                                @let label = format!("layer {l}, head {h}: attention weights, darker = more");
                                td { (matrix_svg(weights, 4.0, BLUE, &label)) }
                            }
                        }
                    }
                }
            }
        }
        .into()
    }

    /// How one head arrives at the weights of `token`: its query, every key, their elementwise product
    /// (whose sum, divided by √head_dim, is the score), and the softmax weight. Blue is positive, red
    /// negative.
    pub fn neuron_view(&self, layer: usize, head: usize, token: usize, qk: &QueriesAndKeys) -> Result<Html> {
        self.check(layer, head)?;
        let n = self.tokens.len();
        ensure!(token < n, "token {token} does not exist: choose 0..{}", n - 1);
        ensure!(qk.queries.len() == n && qk.keys.len() == n, "queries and keys must have one row per token");
        let q = &qk.queries[token];
        let d = q.len();
        let scale = qk.keys.iter().flatten().chain(q).fold(0f32, |m, v| m.max(v.abs())).max(1e-6);
        let product_scale =
            qk.keys.iter().flat_map(|k| k.iter().zip(q).map(|(a, b)| (a * b).abs())).fold(0f32, f32::max).max(1e-6);
        // Each band is an image of a vector's numbers: blue positive, red negative, opacity the size.
        let band = |values: &[f32], scale: f32, what: &str| {
            html! {
                svg xmlns="http://www.w3.org/2000/svg" width=(3 * values.len()) height="14" role="img" {
                    title { (what) ": " (values.len()) " numbers, blue positive, red negative, stronger = larger" }
                    @for (i, v) in values.iter().enumerate() {
                        rect x=(3 * i) y="0" width="3" height="14" fill=(if *v >= 0.0 { BLUE } else { RED })
                            fill-opacity=(format!("{:.3}", (v.abs() / scale).min(1.0))) {}
                    }
                }
            }
        };
        let weights = &self.attentions[layer][head][token];
        Ok(html! {
            div class="anatomy-view" style=(STYLE) {
                div {
                    "layer " (layer) " · head " (head) " · query token "
                    b { (self.tokens[token]) }
                    " (" (d) " dimensions) "
                    span style={ "margin-left:1em;color:" (MUTED) } {
                        "a static view of one query token: choose another with neuron_view's token (--token N)"
                    }
                }
                table style="border-collapse: collapse" {
                    tr { td { "query q" } td { (band(q, scale, "query q")) } td {} td {} td {} }
                    tr { th { "key token" } th { "key k" } th { "q × k" } th { "q·k/√d" } th { "weight" } }
                    @for (j, (k, weight)) in qk.keys.iter().zip(weights).enumerate() {
                        @let product: Vec<f32> = k.iter().zip(q).map(|(a, b)| a * b).collect();
                        @let score = product.iter().sum::<f32>() / (d as f32).sqrt();
                        tr {
                            td style={ "color:" (self.token_color(j)) } { (self.tokens[j]) }
                            td { (band(k, scale, &format!("key of {}", self.tokens[j]))) }
                            td { (band(&product, product_scale, "q × k, element by element")) }
                            td style="text-align:right" { (format!("{score:.2}")) }
                            td {
                                svg xmlns="http://www.w3.org/2000/svg" width="60" height="12" aria-hidden="true" {
                                    rect x="0" y="1" width=(format!("{:.1}", 60.0 * weight)) height="10" fill=(BLUE) {}
                                }
                                " " (format!("{weight:.3}"))
                            }
                        }
                    }
                }
            }
        }
        .into())
    }

    /// The chosen head as JSON: `{"tokens": [...], "layer": L, "head": H, "weights": [[...], ...]}`.
    pub fn head_json(&self, layer: usize, head: usize) -> Result<serde_json::Value> {
        self.check(layer, head)?;
        Ok(
            serde_json::json!({"tokens": self.tokens, "layer": layer, "head": head, "weights": self.weights(layer, head)}),
        )
    }
}

/// The head view's script, from its start: the page's data, and `redraw`, which draws the lines of the head
/// the selectors choose (in the colours of [`AttentionPicture::head_svg`]) as the static picture has them.
fn head_view_redraw() -> String {
    format!(
        r#"(function () {{
  var root = document.currentScript.parentNode;
  var data = JSON.parse(root.querySelector(".anatomy-data").textContent);
  var layer = root.querySelector(".anatomy-layer"), head = root.querySelector(".anatomy-head-select");
  var svgNs = "http://www.w3.org/2000/svg";
  function redraw() {{
    var weights = data.attentions[+layer.value][+head.value];
    var svg = root.querySelector("svg.anatomy-head"), lines = svg.querySelector("g.lines");
    svg.setAttribute("data-drawn-by", "script");
    while (lines.firstChild) lines.removeChild(lines.firstChild);
    svg.querySelector("text").textContent = "layer " + layer.value + " · head " + head.value;
    svg.setAttribute("aria-label", svg.getAttribute("aria-label").replace(/^attention of layer \d+, head \d+/,
      "attention of layer " + layer.value + ", head " + head.value));
    weights.forEach(function (row, i) {{
      var color = (data.sentence_b_start !== null && i >= data.sentence_b_start) ? "{ORANGE}" : "{BLUE}";
      row.forEach(function (w, j) {{
        if (w < 0.01) return;
        var line = document.createElementNS(svgNs, "line");
        line.setAttribute("x1", 156); line.setAttribute("x2", 264);
        line.setAttribute("y1", 44 + 20 * (i + 0.5)); line.setAttribute("y2", 44 + 20 * (j + 0.5));
        line.setAttribute("stroke", color); line.setAttribute("stroke-width", 2);
        line.setAttribute("stroke-opacity", w.toFixed(3));
        line.setAttribute("data-from", i);
        lines.appendChild(line);
      }});
    }});
  }}
"#
    )
}

/// The rest of the head view's script, before its end: hovering, clicking and the keyboard show one
/// token's lines, and the selectors redraw.
const HEAD_VIEW_POINTER: &str = r#"  // Hover over a token on the left to see only its lines; click to keep that, click again to release.
  var pinned = null;
  function only(i) {
    root.querySelectorAll("g.lines line").forEach(function (l) {
      l.style.display = (i === null || l.getAttribute("data-from") === String(i)) ? "" : "none";
    });
  }
  root.addEventListener("mouseover", function (e) {
    var i = e.target.getAttribute && e.target.getAttribute("data-i");
    if (i !== null && i !== undefined && pinned === null) only(i);
  });
  root.addEventListener("mouseout", function (e) {
    if (e.target.getAttribute && e.target.getAttribute("data-i") !== null && pinned === null) only(null);
  });
  function pin(i, byKeyboard) {
    pinned = (pinned === i) ? null : i;
    root.querySelectorAll(".anatomy-from").forEach(function (t) {
      t.setAttribute("aria-pressed", t.getAttribute("data-i") === pinned ? "true" : "false");
    });
    // Unpinned from the keyboard, the token keeps the focus and shows its lines, as one under the mouse.
    only(pinned !== null ? pinned : (byKeyboard ? i : null));
  }
  root.addEventListener("click", function (e) {
    var i = e.target.getAttribute && e.target.getAttribute("data-i");
    if (i !== null && i !== undefined) pin(i, false);
  });
  // The keyboard does what the mouse does: focus shows a token's lines as hovering does, Enter or Space
  // keeps them as a click does.
  root.addEventListener("keydown", function (e) {
    var i = e.target.getAttribute && e.target.getAttribute("data-i");
    if (i === null || i === undefined || (e.key !== "Enter" && e.key !== " ")) return;
    e.preventDefault();
    if (!e.repeat) pin(i, true);
  });
  root.addEventListener("focusin", function (e) {
    var i = e.target.getAttribute && e.target.getAttribute("data-i");
    if (i !== null && i !== undefined && pinned === null) only(i);
  });
  root.addEventListener("focusout", function (e) {
    if (e.target.getAttribute && e.target.getAttribute("data-i") !== null && pinned === null) only(null);
  });
  redraw(); // the same picture as the static one: proves the script runs
  layer.addEventListener("change", function () { redraw(); only(pinned); });
  head.addEventListener("change", function () { redraw(); only(pinned); });
"#;

/// A matrix as an SVG heatmap with `cell` pixels per entry; opacity follows the value (scaled to the
/// largest magnitude), blue for positive and red for negative values. `label` is what a screen reader
/// says of it (the picture is an image with that title).
fn matrix_svg(rows: &[Vec<f32>], cell: f64, positive: &str, label: &str) -> Markup {
    let (h, w) = (rows.len(), rows.first().map_or(0, Vec::len));
    let scale = rows.iter().flatten().fold(0f32, |m, v| m.max(v.abs())).max(1e-6);
    let (width, height) = (cell * w as f64, cell * h as f64);
    html! {
        svg xmlns="http://www.w3.org/2000/svg" width=(width) height=(height)
            viewBox={ "0 0 " (width) " " (height) } role="img" {
            title { (label) }
            @for (i, row) in rows.iter().enumerate() {
                @for (j, v) in row.iter().enumerate() {
                    rect x=(cell * j as f64) y=(cell * i as f64) width=(cell) height=(cell)
                        fill=(if *v >= 0.0 { positive } else { RED })
                        fill-opacity=(format!("{:.3}", v.abs() / scale)) {}
                }
            }
        }
    }
}

/// The page's own style: light, or dark where the reader's system is.
const PAGE_STYLE: &str = "body { margin: 1.5em; background: #fff; color: #111; } @media (prefers-color-scheme: dark) \
                          { body { background: #111; color: #eee; } } select { margin: 0 .5em; }";

/// A complete HTML page around a view (`body`, HTML already), for writing to a file.
pub fn html_page(title: &str, body: &str) -> String {
    let page = html! {
        (DOCTYPE) "\n"
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) }
                "\n" style { (PreEscaped(PAGE_STYLE)) } "\n"
            }
            body { "\n" (PreEscaped(body)) "\n" }
        }
        "\n"
    };
    page.into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "</script><script>alert(1)</script>";

    /// Six tokens, one of them a script's end and start, one with a `"`, on two layers of two heads.
    fn hostile_picture() -> AttentionPicture {
        let tokens = ["[CLS]", HOSTILE, r#"a"b"#, "it's", "<s>", "[SEP]"].map(String::from).to_vec();
        let n = tokens.len();
        let uniform = vec![vec![1.0 / n as f32; n]; n];
        AttentionPicture { tokens, sentence_b_start: Some(3), attentions: vec![vec![uniform; 2]; 2] }
    }

    #[test]
    fn the_html_of_every_view_escapes_a_hostile_token_and_title() {
        let p = hostile_picture();
        let escaped = "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;";
        let title = format!(r#"attention: {HOSTILE} / "quoted""#);
        let head = html_page(&title, &p.head_view(1, 1).unwrap());
        assert!(head.contains(&format!("<title>attention: {escaped} / &quot;quoted&quot;</title>")), "{head}");
        assert!(head.contains(&format!(r#"style="cursor:pointer">{escaped}</text>"#)), "{head}");
        assert!(head.contains(r#"style="cursor:pointer">a&quot;b</text>"#), "{head}");
        // Only the page's own two scripts end, the data's and the code's: in the data, which HTML reads up to
        // the first "</script", the token is written "<\/script>", and the whole of it is JSON.
        assert_eq!(head.matches("</script").count(), 2, "{head}");
        let start = head.find(r#"class="anatomy-data">"#).unwrap() + r#"class="anatomy-data">"#.len();
        let end = start + head[start..].find("</script").unwrap();
        let data: serde_json::Value = serde_json::from_str(&head[start..end]).unwrap();
        assert_eq!(data["tokens"][1], HOSTILE);
        let outside_the_data = [&head[..start], &head[end..]].concat();
        assert_eq!(outside_the_data.matches("<script").count(), 2, "{head}");
        assert!(head.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"), "the page says its language");

        let model = p.model_view();
        assert!(!model.contains("<script"));
        let qk = QueriesAndKeys { queries: vec![vec![1.0, -1.0]; 6], keys: vec![vec![0.5, 2.0]; 6] };
        let neuron = p.neuron_view(0, 0, 1, &qk).unwrap();
        assert!(neuron.contains(&format!("query token <b>{escaped}</b>")), "{}", &*neuron);
        assert!(neuron.contains(&format!("<title>key of {escaped}: 2 numbers")), "{}", &*neuron);
        assert!(neuron.contains("<title>key of a&quot;b: 2 numbers"), "{}", &*neuron);
        assert!(!neuron.contains("<script"), "{}", &*neuron);
    }
}
