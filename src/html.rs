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

/// An SVG picture with `title` as its `<title>`, the first thing inside `<svg …>`: what a screen reader
/// reads and a browser shows on hover, and how a check finds a picture's title without reading pixels.
/// Text without an `<svg` tag comes back unchanged.
pub fn titled_svg(svg: &str, title: &str) -> String {
    match svg.find("<svg").and_then(|start| svg[start..].find('>').map(|end| start + end + 1)) {
        Some(at) => format!("{}<title>{}</title>{}", &svg[..at], escape(title), &svg[at..]),
        None => svg.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_goes_first_inside_the_svg_and_is_escaped() {
        let svg = r#"<?xml version="1.0"?><svg width="2" height="2"><rect/></svg>"#;
        assert_eq!(
            titled_svg(svg, "loss < 1 & falling"),
            r#"<?xml version="1.0"?><svg width="2" height="2"><title>loss &lt; 1 &amp; falling</title><rect/></svg>"#
        );
        assert_eq!(titled_svg("<p>no picture</p>", "t"), "<p>no picture</p>");
    }
}
