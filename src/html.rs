//! # HTML for notebooks and pictures
//!
//! The pictures and tables of this crate are self-contained HTML or SVG, written with maud's `html!` macro
//! (as the class report's pages are), which escapes every value where it lands: a token such as `<s>`, a
//! `"` in an attribute, a `</script>` in a title. Only what is already markup (a picture plotters drew, the
//! page's own style and script) is placed as it is, through [`maud::PreEscaped`] or [`Html`]. [`Html`]
//! wraps a finished piece so that an evcxr notebook renders it when it is a cell's value. Both the
//! attention pictures and the notebook display use this one module.
use maud::{html, Markup, Render};

/// A piece of HTML that renders itself inline when it is the value of an evcxr notebook cell, and reads
/// as a string everywhere else (`&*html`, `html.contains(…)`). Inside `html!` it is placed as it is:
/// it is markup already.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Html(pub String);

impl Html {
    /// Called by the evcxr kernel for a cell's final value: shows the picture instead of its source.
    #[cfg(feature = "pictures")]
    pub fn evcxr_display(&self) {
        evcxr_runtime::mime_type("text/html").text(&self.0);
    }
}

impl From<Markup> for Html {
    fn from(markup: Markup) -> Self {
        Html(markup.into_string())
    }
}

impl Render for Html {
    fn render_to(&self, buffer: &mut String) {
        buffer.push_str(&self.0);
    }
}

impl std::ops::Deref for Html {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Html {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An SVG picture that says what it shows: `role="img"` on the `<svg>` tag, `title` as its `<title>` and
/// `description` (a sentence: what is plotted against what) as its `<desc>`, the first things inside it.
/// A screen reader reads both, a browser shows the title on hover, and a check finds a picture's title
/// without reading pixels. Text without an `<svg` tag comes back unchanged.
pub fn titled_svg(svg: &str, title: &str, description: &str) -> String {
    let Some(start) = svg.find("<svg") else { return svg.to_string() };
    let Some(end) = svg[start..].find('>').map(|end| start + end) else { return svg.to_string() };
    let role = if svg[start..end].contains(" role=") { "" } else { r#" role="img""# };
    let said = html! { title { (title) } desc { (description) } };
    [&svg[..end], role, ">", &said.0, &svg[end + 1..]].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_and_a_description_go_first_inside_the_svg_and_are_escaped() {
        let svg = r#"<?xml version="1.0"?><svg width="2" height="2"><rect/></svg>"#;
        assert_eq!(
            titled_svg(svg, "loss < 1 & falling", "The loss against the step."),
            r#"<?xml version="1.0"?><svg width="2" height="2" role="img"><title>loss &lt; 1 &amp; falling</title><desc>The loss against the step.</desc><rect/></svg>"#
        );
        assert_eq!(titled_svg("<p>no picture</p>", "t", "d"), "<p>no picture</p>");
    }

    #[test]
    fn a_hostile_title_cannot_end_the_title_or_open_a_script() {
        let hostile = r#"</title></svg><script>alert(1)</script>"#;
        let svg = titled_svg(r#"<svg role="img"><g/></svg>"#, hostile, r#"a "quoted" & <b>bold</b>"#);
        assert_eq!(
            svg,
            "<svg role=\"img\"><title>&lt;/title&gt;&lt;/svg&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>\
             <desc>a &quot;quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt;</desc><g/></svg>"
        );
    }

    #[test]
    fn a_piece_of_html_is_placed_as_it_is_and_text_beside_it_escaped() {
        let piece = Html(r#"<b class="x">bold</b>"#.to_string());
        let (text, attribute) = ("</script><script>alert(1)</script>", r#"" onmouseover="alert(1)"#);
        let markup = html! { p title=(attribute) { (piece) (text) } };
        assert_eq!(
            markup.0,
            "<p title=\"&quot; onmouseover=&quot;alert(1)\"><b class=\"x\">bold</b>\
             &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</p>"
        );
    }
}
