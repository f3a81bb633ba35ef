//! # The whole model before its parts
//!
//! The chapters build a transformer from the bottom up, which makes it easy to lose sight of where a
//! part sits. This module declares the 2017 encoder-decoder once, as data: every block, the side it
//! belongs to and the chapter that builds it ([`BLOCKS`]), and the three families that keep one side, the
//! other or both ([`FAMILIES`]). [`figure`] draws the blocks as a labelled SVG map; the overview notebook
//! shows it before chapter 01, and a test checks that every chapter it names exists.
//!
//! Chapter section: [`chapters/00-overview.md`](../chapters/00-overview.md).
use maud::{html, Markup};

use crate::html::{titled_svg, Html};

/// Which column of the figure a block sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Reads the whole source at once; every position sees every other.
    Encoder,
    /// Writes the output one token at a time; a position sees only itself and earlier ones, and the
    /// encoder's states.
    Decoder,
}

/// One block of the encoder-decoder, bottom to top within its side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    pub name: &'static str,
    pub side: Side,
    /// Inside the layer that is stacked N times (as opposed to the embeddings below it or the output above).
    pub repeated: bool,
    /// The chapter file that builds it: `chapters/{chapter}.md`.
    pub chapter: &'static str,
}

const fn block(name: &'static str, side: Side, repeated: bool, chapter: &'static str) -> Block {
    Block { name, side, repeated, chapter }
}

/// The encoder-decoder's blocks, each side from its input at the bottom to its output at the top.
pub const BLOCKS: &[Block] = &[
    block("source text → token ids", Side::Encoder, false, "01-tokenize"),
    block("token embeddings + positions", Side::Encoder, false, "06-positional-embeddings"),
    block("multi-head self-attention", Side::Encoder, true, "03-multi-head-attention"),
    block("add & layer norm", Side::Encoder, true, "05-layer-norm-and-encoder-layer"),
    block("feed-forward", Side::Encoder, true, "04-feed-forward"),
    block("add & layer norm", Side::Encoder, true, "05-layer-norm-and-encoder-layer"),
    block("target so far → token ids", Side::Decoder, false, "08-decoder-and-masking"),
    block("token embeddings + positions", Side::Decoder, false, "06-positional-embeddings"),
    block("masked self-attention", Side::Decoder, true, "08-decoder-and-masking"),
    block("add & layer norm", Side::Decoder, true, "05-layer-norm-and-encoder-layer"),
    block("encoder-decoder attention", Side::Decoder, true, "homework-cross-attention"),
    block("add & layer norm", Side::Decoder, true, "05-layer-norm-and-encoder-layer"),
    block("feed-forward", Side::Decoder, true, "04-feed-forward"),
    block("add & layer norm", Side::Decoder, true, "05-layer-norm-and-encoder-layer"),
    block("linear + softmax → next-token probabilities", Side::Decoder, false, "08-decoder-and-masking"),
];

/// The three branches of the family tree: which sides of the encoder-decoder a model keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Branch {
    Encoder,
    Decoder,
    EncoderDecoder,
}

impl Branch {
    pub const ALL: [Branch; 3] = [Branch::Encoder, Branch::Decoder, Branch::EncoderDecoder];

    pub fn name(self) -> &'static str {
        match self {
            Branch::Encoder => "encoder-only",
            Branch::Decoder => "decoder-only",
            Branch::EncoderDecoder => "encoder-decoder",
        }
    }
}

/// A branch as the overview tells it: what it keeps of the figure, what it is good at, and where this
/// project builds one. Its landmark models are `display::FAMILY`'s members of the same branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    pub branch: Branch,
    pub keeps: &'static str,
    pub good_for: &'static str,
    /// The chapters of this project that build or use one.
    pub chapters: &'static [&'static str],
}

/// The three families, in the order the chapters meet them.
pub const FAMILIES: &[Family] = &[
    Family {
        branch: Branch::Encoder,
        keeps: "the encoder column, with a small head on its states",
        good_for: "understanding a whole text: a class, a tag per token, one vector per sentence",
        chapters: &["01-tokenize", "07-encoder-and-classifier", "09-meet-the-transformers", "12-spam-filter"],
    },
    Family {
        branch: Branch::Decoder,
        keeps: "the decoder column, without encoder-decoder attention",
        good_for: "writing text that continues a prompt",
        chapters: &["08-decoder-and-masking", "11-gpt"],
    },
    Family {
        branch: Branch::EncoderDecoder,
        keeps: "both columns, joined by encoder-decoder attention",
        good_for: "turning one text into another: translation, summaries",
        chapters: &["08-decoder-and-masking", "10-training", "homework-cross-attention"],
    },
];

/// The fill of each side's blocks and the colour of the text on them: light blue with dark text, dark
/// orange with white text, so the two sides differ in grey too (relative luminance about 0.69 and 0.15;
/// text contrast 12.6:1 and 5.2:1).
pub const ENCODER_COLOURS: Colours = Colours { fill: (191, 219, 254), text: (15, 23, 42) };
pub const DECODER_COLOURS: Colours = Colours { fill: (194, 65, 12), text: (255, 255, 255) };

/// A block's fill and text colours, as sRGB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Colours {
    pub fill: (u8, u8, u8),
    pub text: (u8, u8, u8),
}
/// The figure's title, its `<title>` too.
pub const TITLE: &str = "The encoder-decoder transformer, and the chapter that builds each block";

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Where the figure's boxes go: their size and gaps, the left and bottom margins, and the canvas's height.
struct Layout {
    box_w: f64,
    box_h: f64,
    gap: f64,
    col_gap: f64,
    left: f64,
    bottom: f64,
    height: f64,
}

impl Layout {
    /// Row r (0 = bottom) of a column: the y of its box's top edge.
    fn y(&self, r: usize) -> f64 {
        self.height - self.bottom - (r as f64 + 1.0) * (self.box_h + self.gap) + self.gap
    }

    /// The x of a side's boxes' left edge.
    fn x(&self, side: Side) -> f64 {
        if side == Side::Encoder {
            self.left
        } else {
            self.left + self.box_w + self.col_gap
        }
    }
}

/// The encoder-decoder as a labelled SVG map: two columns, inputs at the bottom, the layer that repeats
/// framed, each block with the chapter that builds it, and the arrow that carries the encoder's states
/// into every decoder layer.
pub fn figure() -> Html {
    let (box_w, box_h, gap, col_gap) = (300.0, 42.0, 10.0, 90.0);
    let (left, top, bottom) = (110.0, 96.0, 86.0);
    let column = |side: Side| BLOCKS.iter().filter(move |b| b.side == side).collect::<Vec<_>>();
    let (encoder, decoder) = (column(Side::Encoder), column(Side::Decoder));
    let rows = encoder.len().max(decoder.len()) as f64;
    let (width, height) = (2.0 * left + 2.0 * box_w + col_gap, top + rows * (box_h + gap) + bottom);
    let layout = Layout { box_w, box_h, gap, col_gap, left, bottom, height };
    let svg = html! {
        svg xmlns="http://www.w3.org/2000/svg" width=(width) height=(height) viewBox={ "0 0 " (width) " " (height) }
            font-family="sans-serif" font-size="14" {
            defs {
                marker id="overview-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7"
                    orient="auto" {
                    path d="M0,0 L10,5 L0,10 z" fill="#334155" {}
                }
            }
            rect width=(width) height=(height) fill="#ffffff" {}
            text x=(width / 2.0) y="26" text-anchor="middle" font-size="18" { (TITLE) }
            (column_svg(&layout, Side::Encoder, &encoder, "encoder: reads the whole source at once"))
            (column_svg(&layout, Side::Decoder, &decoder, "decoder: writes one token at a time"))
            (encoder_states_svg(&layout, encoder.len(), &decoder))
            text x=(width / 2.0) y=(height - 40.0) text-anchor="middle" font-size="13" fill="#334155" {
                "bottom to top: from token ids to the next token's probabilities; each block names the chapter file \
                 that builds it"
            }
            text x=(width / 2.0) y=(height - 18.0) text-anchor="middle" font-size="13" fill="#334155" {
                "light blue: encoder blocks · dark orange: decoder blocks · dashed frame: the layer stacked N times"
            }
        }
    };
    Html(titled_svg(
        &svg.0,
        TITLE,
        "The encoder's blocks on the left and the decoder's on the right, from the tokens at the bottom to the \
         output at the top, each block labelled with the chapter that builds it; the decoder's encoder-decoder \
         attention takes the encoder's output.",
    ))
}

/// One side's column: its label, the dashed frame around the layer that repeats, and its blocks bottom to
/// top, each joined to the one below by an arrow.
fn column_svg(layout: &Layout, side: Side, blocks: &[&Block], label: &str) -> Markup {
    let Layout { box_w, box_h, .. } = *layout;
    let x0 = layout.x(side);
    let c = x0 + box_w / 2.0;
    // The frame around the repeated layer, with its "× N".
    let repeated: Vec<usize> = blocks.iter().enumerate().filter(|(_, b)| b.repeated).map(|(r, _)| r).collect();
    let frame = repeated
        .first()
        .zip(repeated.last())
        .map(|(&first, &last)| (layout.y(last) - 8.0, layout.y(first) - layout.y(last) + box_h + 16.0));
    let colours = if side == Side::Encoder { ENCODER_COLOURS } else { DECODER_COLOURS };
    let (fill, ink) = (hex(colours.fill), hex(colours.text));
    html! {
        text x=(c) y="60" text-anchor="middle" font-size="15" font-weight="bold" { (label) }
        @if let Some((fy, fh)) = frame {
            rect x=(x0 - 10.0) y=(fy) width=(box_w + 20.0) height=(fh) rx="8" fill="none" stroke="#334155"
                stroke-dasharray="6 4" {}
            text x=(if side == Side::Encoder { x0 - 14.0 } else { x0 + box_w + 84.0 }) y=(fy + fh / 2.0)
                text-anchor="end" font-size="13" fill="#334155" { "× N layers" }
        }
        @for (r, b) in blocks.iter().enumerate() {
            @let by = layout.y(r);
            rect x=(x0) y=(by) width=(box_w) height=(box_h) rx="5" fill=(fill) {}
            text x=(c) y=(by + 18.0) text-anchor="middle" fill=(ink) { (b.name) }
            text x=(c) y=(by + 34.0) text-anchor="middle" font-size="12" fill=(ink) { (b.chapter) }
            @if r > 0 {
                line x1=(c) y1=(layout.y(r - 1)) x2=(c) y2=(by + box_h + 1.0) stroke="#334155"
                    marker-end="url(#overview-arrow)" {}
            }
        }
    }
}

/// The encoder's output leaves the top of its column (`encoder_rows` high) and goes into the decoder's
/// encoder-decoder attention (in every decoder layer: the figure draws the layer once).
fn encoder_states_svg(layout: &Layout, encoder_rows: usize, decoder: &[&Block]) -> Markup {
    let top_encoder = layout.y(encoder_rows - 1);
    let Some(r) = decoder.iter().position(|b| b.name == "encoder-decoder attention") else { return html! {} };
    let from_x = layout.x(Side::Encoder) + layout.box_w - 40.0;
    let (to_x, to_y) = (layout.x(Side::Decoder), layout.y(r) + layout.box_h / 2.0);
    html! {
        path d={ "M" (from_x) "," (top_encoder) " C" (from_x) "," (top_encoder - 50.0) " " (to_x - 60.0) "," (to_y) " "
                 (to_x - 1.0) "," (to_y) }
            fill="none" stroke="#334155" stroke-width="2" marker-end="url(#overview-arrow)" {}
        text x=(from_x - 8.0) y=(top_encoder - 24.0) text-anchor="end" font-size="13" fill="#334155" {
            "encoder states"
        }
    }
}

/// The contrast ratio of two colours as WCAG 2.1 defines it, from 1 (the same) to 21 (black on white).
pub fn contrast(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// The relative luminance of an sRGB colour (WCAG 2.1's definition): how bright it looks in grey.
pub fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
    let channel = |c: u8| {
        let c = c as f64 / 255.0;
        if c <= 0.03928 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
}
