//! The README is read top to bottom in two minutes and sends the reader on to `docs/` and
//! `exercises/README.md` for the details: every relative link in those pages must reach a file that
//! exists, and an `#anchor` into a Markdown page must name one of its headings, or a detail the README
//! gave away is lost. The README itself stays short, 150 lines at most. In the students' copy, what
//! instructors keep back (`exercises/kept-back`) may be missing.
#[path = "common/kept_back.rs"]
mod kept_back;
use std::path::{Component, Path, PathBuf};

/// The pages checked, from the project's root: the README, every page of `docs/`, the exercises' page.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md"), PathBuf::from("exercises/README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ holds the pages the README links to")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| p.strip_prefix(root).unwrap().to_path_buf())
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The lines of `text` outside fenced code blocks (``` or ~~~).
fn prose_lines(text: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
        } else if !fenced {
            lines.push(line);
        }
    }
    lines
}

/// Every link target of a Markdown text, inline (`[text](target)`, `![alt](target)`) or by reference
/// (`[name]: target`), leaving out code blocks and code spans, where `](` is code and not a link.
fn link_targets(text: &str) -> Vec<String> {
    let lines = prose_lines(text);
    let mut targets = Vec::new();
    for line in &lines {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix('[').and_then(|r| r.split_once("]:")) {
            if !rest.0.contains(']') {
                if let Some(target) = rest.1.split_whitespace().next() {
                    targets.push(target.trim_matches(['<', '>']).to_string());
                }
            }
        }
    }
    // Code spans may run over a line break: drop them from the whole text, not line by line.
    let prose: String = lines.join("\n").split('`').step_by(2).collect::<Vec<_>>().join(" ");
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let target = match rest.strip_prefix('<') {
            Some(inner) => inner.split('>').next().unwrap_or(""),
            None => rest.split(|c: char| c == ')' || c.is_whitespace()).next().unwrap_or(""),
        };
        targets.push(target.to_string());
    }
    targets
}

/// GitHub's anchor for a heading: lower case, spaces to hyphens, other punctuation dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown page's headings (a repeated heading gets `-1`, `-2`, … as on GitHub).
fn anchors(text: &str) -> Vec<String> {
    let (mut bases, mut anchors): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for line in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = slug(&line[hashes..]);
            let n = bases.iter().filter(|b| **b == base).count();
            anchors.push(if n == 0 { base.clone() } else { format!("{base}-{n}") });
            bases.push(base);
        }
    }
    anchors
}

/// `a/b/../c` as `a/c`, so that a link from `docs/` is compared with `exercises/kept-back` by its path
/// from the root.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// What is wrong with each relative link of `page` (a path from `root`): a file that does not exist, or
/// an anchor that names no heading of its page.
fn broken_links(root: &Path, page: &Path, kept_back: &[String], students_copy: bool) -> Vec<String> {
    let text = std::fs::read_to_string(root.join(page)).unwrap();
    let dir = page.parent().unwrap_or(Path::new(""));
    let mut broken = Vec::new();
    for target in link_targets(&text) {
        if ["http://", "https://", "mailto:"].iter().any(|s| target.starts_with(s)) {
            continue;
        }
        let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
        let linked = if file.is_empty() { page.to_path_buf() } else { normalise(&dir.join(file)) };
        if !root.join(&linked).exists() {
            let from_root = linked.to_string_lossy();
            let kept = students_copy && kept_back.iter().any(|k| from_root.starts_with(k.as_str()));
            if !kept {
                broken.push(format!("{}: {target} — {} does not exist", page.display(), linked.display()));
            }
            continue;
        }
        let is_markdown = linked.extension().is_some_and(|x| x == "md");
        if !anchor.is_empty() && is_markdown {
            let linked_text = std::fs::read_to_string(root.join(&linked)).unwrap();
            if !anchors(&linked_text).iter().any(|a| a == anchor) {
                broken.push(format!(
                    "{}: {target} — {} has no heading whose anchor is #{anchor}",
                    page.display(),
                    linked.display()
                ));
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_of_the_readme_and_the_docs_reaches_a_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (kept_back, students_copy) = kept_back::kept_back(root);
    let pages = pages(root);
    assert!(pages.len() >= 4, "the README's pages in docs/ are missing: {pages:?}");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let relative = link_targets(&readme).iter().filter(|t| !t.starts_with("http")).count();
    assert!(relative >= 30, "only {relative} relative links found in README.md: is the link reader broken?");
    let broken: Vec<String> =
        pages.iter().flat_map(|page| broken_links(root, page, &kept_back, students_copy)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_short() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lines = std::fs::read_to_string(root.join("README.md")).unwrap().lines().count();
    assert!(lines <= 150, "README.md has {lines} lines: move details to docs/ and keep it at 150 or fewer");
}

/// The link reader itself: links in prose and by reference are found, those in code are not, and a
/// heading's anchor is GitHub's.
#[test]
fn the_link_reader_finds_links_in_prose_only() {
    let text = "See [a](a.md) and ![b](img/b.png \"title\"), not `[c](c.md)` nor `x\n[d](d.md)`.\n\
                ```\n[e](e.md)\n```\n[f]: f.md#top\n[g](<g h.md>) [i](https://example.org) [j](#here)\n";
    assert_eq!(link_targets(text), ["f.md#top", "a.md", "img/b.png", "g h.md", "https://example.org", "#here"]);
    assert_eq!(
        anchors("# Top\n## How `make test` checks it\n```\n# not a heading\n```\n## The kernel's patch\n# Top\n"),
        ["top", "how-make-test-checks-it", "the-kernels-patch", "top-1"]
    );
}
