//! # HTML for notebooks and pictures
//!
//! The pictures and tables of this crate are self-contained HTML or SVG strings. [`Html`] wraps one so
//! that an evcxr notebook renders it when it is a cell's value, and [`escape`] makes any text (a token
//! such as `<s>` or `"`) safe to place inside it. Both the attention pictures and the notebook display
//! use this one module.
/// A piece of HTML that renders itself inline when it is the value of an evcxr notebook cell, and reads
/// as a string everywhere else (`&*html`, `html.contains(…)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Html(pub String);

impl Html {
    /// Called by the evcxr kernel for a cell's final value: shows the picture instead of its source.
    #[cfg(feature = "pictures")]
    pub fn evcxr_display(&self) {
        evcxr_runtime::mime_type("text/html").text(&self.0);
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

/// Text made safe to place inside HTML or SVG, in element content and in attribute values alike.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// An SVG picture that says what it shows: `role="img"` on the `<svg>` tag, `title` as its `<title>` and
/// `description` (a sentence: what is plotted against what) as its `<desc>`, the first things inside it.
/// A screen reader reads both, a browser shows the title on hover, and a check finds a picture's title
/// without reading pixels. Text without an `<svg` tag comes back unchanged.
pub fn titled_svg(svg: &str, title: &str, description: &str) -> String {
    let Some(start) = svg.find("<svg") else { return svg.to_string() };
    let Some(end) = svg[start..].find('>').map(|end| start + end) else { return svg.to_string() };
    let tag = &svg[start..end];
    let role = if tag.contains(" role=") { "" } else { r#" role="img""# };
    format!(
        "{tag_and_before}{role}><title>{}</title><desc>{}</desc>{}",
        escape(title),
        escape(description),
        &svg[end + 1..],
        tag_and_before = &svg[..end]
    )
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
}
