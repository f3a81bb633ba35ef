//! The overview's map (`chapters/00-overview.md`): the chapters it names exist, the repeated layer is
//! one run of blocks per side, the three branches are told once each and have landmark models, and the
//! figure carries its title, every block and colours that differ in grey and stay readable.
use std::path::Path;

use transformer_anatomy::overview::{
    contrast, figure, luminance, Branch, Side, BLOCKS, DECODER_COLOURS, ENCODER_COLOURS, FAMILIES, TITLE,
};

fn chapter_exists(name: &str) -> bool {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("chapters").join(format!("{name}.md")).is_file()
}

#[test]
fn every_chapter_the_map_names_exists() {
    let named = BLOCKS.iter().map(|b| b.chapter).chain(FAMILIES.iter().flat_map(|f| f.chapters.iter().copied()));
    let missing: Vec<&str> = named.filter(|c| !chapter_exists(c)).collect();
    assert!(missing.is_empty(), "no chapters/NAME.md for {missing:?}");
    assert!(!chapter_exists("no-such-chapter"), "the check must be able to fail");
}

#[test]
fn each_side_repeats_one_run_of_blocks_between_its_input_and_output() {
    for side in [Side::Encoder, Side::Decoder] {
        let flags: Vec<bool> = BLOCKS.iter().filter(|b| b.side == side).map(|b| b.repeated).collect();
        let first = flags.iter().position(|&r| r).expect("a repeated layer");
        let last = flags.iter().rposition(|&r| r).unwrap();
        assert!(flags[first..=last].iter().all(|&r| r), "{side:?}: the repeated blocks are not one run: {flags:?}");
        assert!(first > 0, "{side:?}: nothing comes before the repeated layer (ids, embeddings)");
    }
    // The decoder's layer has three sub-layers (six blocks with their add & norm), the encoder's two.
    let count = |side| BLOCKS.iter().filter(|b| b.side == side && b.repeated).count();
    assert_eq!((count(Side::Encoder), count(Side::Decoder)), (4, 6));
}

#[test]
fn every_branch_is_told_once() {
    for branch in Branch::ALL {
        assert_eq!(FAMILIES.iter().filter(|f| f.branch == branch).count(), 1, "{}", branch.name());
    }
}

// The landmark models are `display`'s, which needs the `pictures` feature.
#[cfg(feature = "pictures")]
#[test]
fn every_branch_has_landmark_models() {
    for branch in Branch::ALL {
        let landmarks = transformer_anatomy::display::FAMILY.iter().filter(|m| m.branch == branch).count();
        assert!(landmarks > 0, "no landmark model for {}", branch.name());
    }
}

#[test]
fn the_figure_has_its_title_every_block_and_colours_that_differ_in_grey() {
    let svg = figure();
    assert!(svg.contains(&format!("<title>{TITLE}</title>")), "no <title>");
    assert_eq!(svg.matches("<svg").count(), 1);
    assert!(svg.trim_end().ends_with("</svg>"));
    for b in BLOCKS {
        for label in [b.name.replace('&', "&amp;"), b.chapter.to_string()] {
            assert!(svg.contains(&format!(">{label}</text>")), "the figure does not show {label:?}");
        }
    }
    for side in ["encoder: reads the whole source at once", "decoder: writes one token at a time", "encoder states"] {
        assert!(svg.contains(side), "no label {side:?}");
    }
    let (e, d) = (ENCODER_COLOURS, DECODER_COLOURS);
    assert!((luminance(e.fill) - luminance(d.fill)).abs() > 0.4, "the two sides look alike in grey");
    for c in [e, d] {
        assert!(
            contrast(c.fill, c.text) >= 4.5,
            "text on {:?}: contrast {:.2} < 4.5",
            c.fill,
            contrast(c.fill, c.text)
        );
    }
    // The formula against WCAG's own end points.
    assert!((contrast((0, 0, 0), (255, 255, 255)) - 21.0).abs() < 1e-9);
    assert!((luminance((119, 119, 119)) - 0.1845).abs() < 1e-3);
}
