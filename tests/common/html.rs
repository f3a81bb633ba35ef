//! Checks of the self-contained HTML pages the pictures are (used by the library's and the command's tests).

/// A small well-formedness check: every tag that opens is closed, in order (void and self-closing tags
/// aside), and script/style contents are skipped.
pub fn assert_well_formed(html: &str) {
    let void = ["meta", "br", "input", "img", "hr", "link", "!DOCTYPE"];
    let mut stack: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        rest = &rest[start + 1..];
        let end = rest.find('>').expect("a tag that never closes");
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().unwrap_or_else(|| panic!("</{name}> closes nothing"));
            assert_eq!(open, name.trim(), "</{name}> closes <{open}>");
            continue;
        }
        let name: String = tag.chars().take_while(|c| !c.is_whitespace() && *c != '/').collect();
        if tag.ends_with('/') || void.contains(&name.as_str()) {
            continue;
        }
        if name == "script" || name == "style" {
            let close = format!("</{name}>");
            let at = rest.find(&close).unwrap_or_else(|| panic!("<{name}> is never closed"));
            rest = &rest[at + close.len()..];
            continue;
        }
        stack.push(name);
    }
    assert!(stack.is_empty(), "tags left open: {stack:?}");
}

pub fn assert_self_contained(html: &str) {
    for attribute in ["src=", "href=", "@import", "url("] {
        for (i, _) in html.match_indices(attribute) {
            let after = &html[i..(i + 40).min(html.len())];
            assert!(!after.contains("http"), "an external resource: {after}");
        }
    }
    assert!(!html.contains("<script src"), "no external script");
}
