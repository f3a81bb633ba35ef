//! The chapter map: which files implement each chapter, which tests check it and which exercises follow it.
//! It is said once, in each chapter's header, the one paragraph of `chapters/*.md` that starts `*Code:`,
//! under its title (chapter 09's, under its first section), which the notebook shows too:
//!
//! ```text
//! *Code: `src/x.rs` (notes), `src/y/` (…) · tests: `tests/x.rs` · exercises: `a`, `b` (…) ·
//! the PyTorch peer: `scripts/p.py` · chapter 8 explains the step*
//! ```
//!
//! Segments are separated by ` · `, each `label: values`. A chapter's code is every backticked path (a name
//! with a `/`) of its `Code:` segment and of a segment whose label ends in `peer` (the program it is
//! measured against); its tests, those of its `tests:` segment; its exercises, the backticked names of its
//! `exercises:` (or `exercise:`) segment. `chapter N explains the step` places a chapter whose name has no
//! number (the homework) after chapter N in the reading order; without it, such a chapter comes last. Other
//! segments (`command line:`, …) are for the reader only.
//!
//! Three copies are written from the headers (`cargo anatomy notebooks chapter-map --write`, through
//! [`stale`]), and `tests/chapter_map.rs`, which includes this file as source, fails when one is stale:
//! - README.md's chapter table: a row per chapter in the reading order, with its number, its chapter's and
//!   its notebook's links and its exercises; the link's text and "what it builds" are a person's words, kept
//!   from the chapter's row (a new chapter's are made from its file name and its title);
//! - docs/contributors.md's "The chapter, file by file": a row per chapter in the reading order, with its
//!   code (and peer) and its tests as its header words them; the "chapter section" is a person's words,
//!   kept (those of a chapter's several rows joined by `; `);
//! - src/lib.rs: each `pub mod x;` line's comment names the chapters whose header names `src/x.rs` or
//!   something under `src/x/`, in the reading order; a note in parentheses after a chapter and the words
//!   after the list (`: …`) are kept. A module a header names with no `pub mod` line is refused, named.
//!
//! Only the standard library, so that the learner's crate's tests include it without depending on the
//! exercises' crates.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One chapter's header: the file (`05-layer-norm-and-encoder-layer.md`) and what it names.
#[derive(Debug, Default, Clone)]
pub struct Header {
    pub chapter: String,
    /// The title, after its `# ` (`5 · Layer normalization, …`).
    pub title: String,
    pub code: Vec<String>,
    pub tests: Vec<String>,
    pub exercises: Vec<String>,
    /// The `Code:` segment's words, then each peer's (`; the PyTorch peer `scripts/p.py``).
    pub code_words: String,
    /// The `tests:` segment's words.
    pub tests_words: String,
    /// The number of the chapter that explains this one's step (`08`), for a chapter with no number.
    pub follows: Option<String>,
}

impl Header {
    /// `chapters/NAME.md`, as the copies name it.
    pub fn path(&self) -> String {
        format!("chapters/{}", self.chapter)
    }

    fn stem(&self) -> &str {
        self.chapter.trim_end_matches(".md")
    }

    /// The chapter's number as its file name starts (`05`), or `hw` for one without.
    fn number(&self) -> &str {
        match self.stem().split_once('-') {
            Some((n, _)) if n.chars().all(|c| c.is_ascii_digit()) => n,
            _ => "hw",
        }
    }

    /// A new chapter's link text in the README: its file name, number and hyphens left out.
    fn short_name(&self) -> String {
        let stem = self.stem();
        let words = if self.number() == "hw" { stem } else { stem.split_once('-').map_or(stem, |(_, w)| w) };
        words.replace('-', " ")
    }

    /// A new chapter's description: its title, its number left out.
    fn description(&self) -> String {
        self.title.split_once(" · ").map_or(self.title.as_str(), |(_, t)| t).to_string()
    }
}

/// The text between backticks.
fn spans(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

/// The backticked names with a `/`: paths from the project's root.
pub fn paths(text: &str) -> Vec<String> {
    spans(text).filter(|s| s.contains('/') && !s.contains(' ')).map(str::to_string).collect()
}

/// The lines of `text` outside fenced code blocks.
fn prose_lines(text: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push(line);
        }
    }
    lines
}

/// The `*Code: …*` paragraph of a chapter, its stars left out, or why there is none.
fn header_paragraph(name: &str, lines: &[&str]) -> Result<String, String> {
    let starts: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("*Code:")).collect();
    let &[start] = starts.as_slice() else {
        return Err(format!("chapters/{name}: {} paragraphs start with *Code:, not one", starts.len()));
    };
    let mut paragraph = String::new();
    for line in &lines[start..] {
        paragraph.push_str(line.trim());
        paragraph.push(' ');
        if line.trim_end().ends_with('*') || line.trim().is_empty() {
            break;
        }
    }
    Ok(paragraph.trim().trim_start_matches('*').trim_end_matches('*').to_string())
}

/// The header of the chapter `name` whose text is `text`, or why there is none.
pub fn parse_header(name: &str, text: &str) -> Result<Header, String> {
    let lines = prose_lines(text);
    let inner = header_paragraph(name, &lines)?;
    let title = lines.iter().find_map(|l| l.strip_prefix("# ")).unwrap_or(name).trim().to_string();
    let mut header = Header { chapter: name.to_string(), title, ..Header::default() };
    let mut peers = String::new();
    for segment in inner.split(" · ").map(str::trim) {
        if let Some(n) = segment.strip_prefix("chapter ").and_then(|r| r.strip_suffix(" explains the step")) {
            header.follows = n.parse::<u32>().ok().map(|n| format!("{n:02}"));
        }
        let Some((label, values)) = segment.split_once(':') else { continue };
        let (label, values) = (label.trim(), values.trim());
        match label {
            "Code" => {
                header.code.extend(paths(values));
                header.code_words = values.to_string();
            }
            "tests" => {
                header.tests.extend(paths(values));
                header.tests_words = values.to_string();
            }
            "exercises" | "exercise" => header.exercises.extend(
                spans(values)
                    .filter(|s| {
                        !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                    })
                    .map(str::to_string),
            ),
            l if l.ends_with("peer") => {
                header.code.extend(paths(values));
                peers.push_str(&format!("; {l} {values}"));
            }
            _ => {}
        }
    }
    header.code_words.push_str(&peers);
    if header.code.is_empty() || header.tests.is_empty() {
        return Err(format!("chapters/{name}: its *Code:* paragraph names no code or no tests: {inner}"));
    }
    Ok(header)
}

/// Chapters with a number in their files' order, each one without after the chapter it follows.
fn reading_order(headers: Vec<Header>) -> Vec<Header> {
    let (mut placed, unnumbered): (Vec<Header>, Vec<Header>) = headers.into_iter().partition(|h| h.number() != "hw");
    placed.sort_by(|a, b| a.chapter.cmp(&b.chapter));
    for h in unnumbered {
        let after = h.follows.as_deref().and_then(|n| placed.iter().rposition(|p| p.number() == n));
        placed.insert(after.map_or(placed.len(), |i| i + 1), h);
    }
    placed
}

/// Every chapter's header (`chapters/*.md`), in the reading order, or every reason why one has none.
pub fn headers(root: &Path) -> Result<Vec<Header>, String> {
    let folder = root.join("chapters");
    let entries = std::fs::read_dir(&folder).map_err(|e| format!("cannot read {}: {e}", folder.display()))?;
    let mut names: Vec<String> =
        entries.flatten().map(|e| e.file_name().to_string_lossy().to_string()).filter(|n| n.ends_with(".md")).collect();
    names.sort();
    let (mut found, mut problems) = (Vec::new(), Vec::new());
    for name in names {
        let text = std::fs::read_to_string(folder.join(&name)).map_err(|e| format!("chapters/{name}: {e}"))?;
        match parse_header(&name, &text) {
            Ok(h) => found.push(h),
            Err(e) => problems.push(e),
        }
    }
    match (problems.is_empty(), found.is_empty()) {
        (false, _) => Err(problems.join("\n")),
        (true, true) => Err(format!("no chapters in {}", folder.display())),
        (true, false) => Ok(reading_order(found)),
    }
}

/// A Markdown table's row from its cells (an empty cell as `| |`).
fn row(cells: &[String]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| if c.is_empty() { " ".into() } else { format!(" {c} ") }).collect();
    format!("|{}|", cells.join("|"))
}

/// A row's cells.
fn cells(line: &str) -> Vec<String> {
    line.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect()
}

/// `text` with the first Markdown table after the line `heading` replaced by `table`; the rows it replaces
/// (header and rule left out) are handed to `keep` first, to read what a person wrote in them.
fn replace_table(
    text: &str,
    file: &str,
    heading: &str,
    keep: impl FnOnce(Vec<Vec<String>>) -> Vec<String>,
) -> Result<String, String> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| *l == heading).ok_or(format!("{file}: no heading {heading}"))?;
    let start =
        at + lines[at..].iter().position(|l| l.starts_with('|')).ok_or(format!("{file}: no table under {heading}"))?;
    let end = start + lines[start..].iter().take_while(|l| l.starts_with('|')).count();
    let table = keep(lines[start..end].iter().skip(2).map(|l| cells(l)).collect());
    let mut out: Vec<String> = lines[..start].iter().map(|l| l.to_string()).collect();
    out.extend(table);
    out.extend(lines[end..].iter().map(|l| l.to_string()));
    Ok(out.join("\n") + if text.ends_with('\n') { "\n" } else { "" })
}

/// A Markdown link's text and target.
fn link(cell: &str) -> Option<(String, String)> {
    let (text, rest) = cell.strip_prefix('[')?.split_once("](")?;
    Some((text.to_string(), rest.split_once(')')?.0.to_string()))
}

/// README.md's text with its chapter table written from the headers.
pub fn readme(headers: &[Header], text: &str) -> Result<String, String> {
    replace_table(text, "README.md", "## The path through the chapter", |rows| {
        let kept: BTreeMap<String, (String, String)> = rows
            .iter()
            .filter_map(|r| Some((link(r.get(1)?)?.1, (link(r.get(1)?)?.0, r.get(3).cloned().unwrap_or_default()))))
            .collect();
        let mut table = vec![
            "| # | chapter | notebook | what it builds | exercises |".to_string(),
            "| --- | --- | --- | --- | --- |".to_string(),
        ];
        for h in headers {
            let (name, what) = kept.get(&h.path()).cloned().unwrap_or_else(|| (h.short_name(), h.description()));
            let exercises: Vec<String> = h.exercises.iter().map(|e| format!("`{e}`")).collect();
            let (chapter, notebook) =
                (format!("[{name}]({})", h.path()), format!("[ipynb](notebooks/{}.ipynb)", h.stem()));
            table.push(row(&[h.number().to_string(), chapter, notebook, what, exercises.join(", ")]));
        }
        table
    })
}

/// docs/contributors.md's text with its table "The chapter, file by file" written from the headers.
pub fn contributors(headers: &[Header], text: &str) -> Result<String, String> {
    replace_table(text, "docs/contributors.md", "## The chapter, file by file", |rows| {
        let mut kept: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in &rows {
            let (Some(chapter), Some(section)) = (r.get(2).and_then(|c| paths(c).into_iter().next()), r.first()) else {
                continue;
            };
            let sections = kept.entry(chapter).or_default();
            if !section.is_empty() && !sections.contains(section) {
                sections.push(section.clone());
            }
        }
        let mut table =
            vec!["| chapter section | code | notes | tests |".to_string(), "| --- | --- | --- | --- |".to_string()];
        for h in headers {
            let section = kept.get(&h.path()).map(|s| s.join("; ")).unwrap_or_else(|| h.description());
            table.push(row(&[section, h.code_words.clone(), format!("`{}`", h.path()), h.tests_words.clone()]));
        }
        table
    })
}

/// The module of the learner's crate a path belongs to: `src/x.rs` and `src/x/…` are `x`; a file under
/// `src/` that is no Rust module (`src/fused_adamw.cpp`) and a path elsewhere belong to none.
fn module_of(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("src/")?;
    match rest.split_once('/') {
        Some((dir, _)) => Some(dir),
        None => rest.strip_suffix(".rs"),
    }
}

/// For each module of the learner's crate that a header names, the chapters that name it (in the reading
/// order), each with the first path of the module it names.
fn chapters_of_modules(headers: &[Header]) -> BTreeMap<String, Vec<(String, String)>> {
    let mut map: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for h in headers {
        for path in &h.code {
            let Some(module) = module_of(path) else { continue };
            let chapters = map.entry(module.to_string()).or_default();
            if !chapters.iter().any(|(c, _)| *c == h.path()) {
                chapters.push((h.path(), path.clone()));
            }
        }
    }
    map
}

/// A `pub mod` line's comment read as the chapters it starts with (each with its note in parentheses, or
/// none) and the words after them (`: …`, or the whole comment when it names no chapter).
fn named_chapters(comment: &str) -> (BTreeMap<String, String>, String) {
    let mut notes = BTreeMap::new();
    let mut rest = comment;
    while let Some(after) = rest.strip_prefix("chapters/") {
        let Some(end) = after.find(".md") else { break };
        let chapter = format!("chapters/{}", &after[..end + 3]);
        rest = &after[end + 3..];
        let mut note = String::new();
        if let Some(inner) = rest.strip_prefix(" (") {
            let mut depth = 1;
            if let Some(close) = inner.find(|c| {
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                depth == 0
            }) {
                note = format!(" ({}", &inner[..=close]);
                rest = &inner[close + 1..];
            }
        }
        notes.insert(chapter, note);
        if rest.starts_with(", chapters/") {
            rest = &rest[2..];
        }
    }
    let prose = if notes.is_empty() { rest } else { rest.strip_prefix(':').unwrap_or(rest) };
    (notes, prose.trim().to_string())
}

/// A `pub mod MODULE;` line whose comment names `chapters`, keeping its notes and words.
fn mod_line(module: &str, comment: &str, chapters: &[(String, String)]) -> String {
    let (notes, prose) = named_chapters(comment);
    let named: Vec<String> =
        chapters.iter().map(|(c, _)| format!("{c}{}", notes.get(c).map_or("", String::as_str))).collect();
    let comment = match (named.is_empty(), prose.is_empty()) {
        (true, true) => String::new(),
        (true, false) => format!(" // {prose}"),
        (false, true) => format!(" // {}", named.join(", ")),
        (false, false) => format!(" // {}: {prose}", named.join(", ")),
    };
    format!("pub mod {module};{comment}")
}

/// src/lib.rs's text with each `pub mod x;` line's comment naming the chapters whose header names it.
pub fn lib_rs(headers: &[Header], text: &str) -> Result<String, String> {
    let expected = chapters_of_modules(headers);
    let mut declared = BTreeSet::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((module, after)) = line.strip_prefix("pub mod ").and_then(|r| r.split_once(';')) else {
            out.push(line.to_string());
            continue;
        };
        declared.insert(module.to_string());
        let comment = after.trim().strip_prefix("//").unwrap_or("").trim();
        out.push(mod_line(module, comment, expected.get(module).map_or(&[], Vec::as_slice)));
    }
    let missing: Vec<String> = expected
        .iter()
        .filter(|(module, _)| !declared.contains(*module))
        .map(|(module, chapters)| {
            format!("src/lib.rs: no `pub mod {module};` for {}, which {} names", chapters[0].1, chapters[0].0)
        })
        .collect();
    if !missing.is_empty() {
        return Err(missing.join("\n"));
    }
    Ok(out.join("\n") + if text.ends_with('\n') { "\n" } else { "" })
}

/// A copy of the chapter map: its file, from the project's root, and how it is written from the headers.
type Copy = (&'static str, fn(&[Header], &str) -> Result<String, String>);

/// The copies of the chapter map, each written whole from the headers.
pub const COPIES: [Copy; 3] = [("README.md", readme), ("docs/contributors.md", contributors), ("src/lib.rs", lib_rs)];

/// Each copy of the chapter map under `root` whose text differs from what the headers make: its path and
/// the text they make; or why the headers or a copy cannot be read.
pub fn stale(root: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let headers = headers(root)?;
    let mut stale = Vec::new();
    for (file, write) in COPIES {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{file}: {e}"))?;
        let made = write(&headers, &text)?;
        if made != text {
            stale.push((path, made));
        }
    }
    Ok(stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIVE: &str = "# 5 · Layers\n\n*Code: `src/residual.rs`, `src/encoder_layer.rs` (the layer) · tests: \
                        `tests/encoder_layer.rs` ·\nexercises: `layer_norm` (`cargo anatomy exercises watch`)*\n\n\
                        ```\n*Code: `src/not_a_header.rs`\n```\n";
    const ELEVEN: &str = "# 11 · A GPT\n\n*Code: `src/gpt/` (`x`) · tests: `tests/gpt.rs` · the PyTorch\npeer: \
                          `scripts/gpt_pytorch.py` · command line: `cargo anatomy gpt`*";
    const HOMEWORK: &str = "# Homework · Layers again\n\n*Code: `crates/checks/src/notebook.rs` · tests: \
                            `crates/notebooks/tests/notebooks.rs` · chapter 5 explains the step · exercise: \
                            `layer_norm`*";

    fn made_up() -> Vec<Header> {
        let named = [("11-gpt.md", ELEVEN), ("05-layers.md", FIVE), ("homework-layers.md", HOMEWORK)];
        reading_order(named.iter().map(|(name, text)| parse_header(name, text).unwrap()).collect())
    }

    #[test]
    fn a_header_is_read_as_its_paths_words_and_place() {
        let [five, homework, eleven] = made_up().try_into().unwrap();
        assert_eq!(five.code, ["src/residual.rs", "src/encoder_layer.rs"]);
        assert_eq!(
            (five.tests_words.as_str(), five.exercises.join(" ")),
            ("`tests/encoder_layer.rs`", "layer_norm".into())
        );
        assert_eq!(eleven.code, ["src/gpt/", "scripts/gpt_pytorch.py"]);
        assert_eq!(eleven.code_words, "`src/gpt/` (`x`); the PyTorch peer `scripts/gpt_pytorch.py`");
        assert_eq!((homework.number(), homework.follows.as_deref()), ("hw", Some("05")));
        assert!(parse_header("09-x.md", "# 9\n\nno header").unwrap_err().contains("0 paragraphs"));
    }

    #[test]
    fn the_readme_table_keeps_a_person_s_words_and_writes_the_rest() {
        let readme =
            "# R\n\n## The path through the chapter\n\nText.\n\n| # | chapter | notebook | what | exercises |\n\
                      | --- | --- | --- | --- | --- |\n\
                      | 05 | [layers](chapters/05-layers.md) | [ipynb](notebooks/x.ipynb) | norms | `x` |\n\
                      | 04 | [gone](chapters/04-gone.md) | | | |\n\nAfter.\n";
        assert_eq!(
            readme_at(readme),
            "# R\n\n## The path through the chapter\n\nText.\n\n\
             | # | chapter | notebook | what it builds | exercises |\n| --- | --- | --- | --- | --- |\n\
             | 05 | [layers](chapters/05-layers.md) | [ipynb](notebooks/05-layers.ipynb) | norms | `layer_norm` |\n\
             | hw | [homework layers](chapters/homework-layers.md) | [ipynb](notebooks/homework-layers.ipynb) | \
             Layers again | `layer_norm` |\n\
             | 11 | [gpt](chapters/11-gpt.md) | [ipynb](notebooks/11-gpt.ipynb) | A GPT | |\n\nAfter.\n"
        );
        assert_eq!(readme_at(&readme_at(readme)), readme_at(readme));
        assert!(super::readme(&made_up(), "no table").unwrap_err().contains("README.md: no heading"));
    }

    fn readme_at(text: &str) -> String {
        readme(&made_up(), text).unwrap()
    }

    #[test]
    fn the_contributors_table_has_a_row_per_chapter_in_its_header_s_words() {
        let text = "## The chapter, file by file\n\n| s | c | n | t |\n| --- | --- | --- | --- |\n\
                    | norms | `src/x.rs` | `chapters/05-layers.md` | |\n| the layer | | `chapters/05-layers.md` | |\n";
        assert_eq!(
            contributors(&made_up(), text).unwrap(),
            "## The chapter, file by file\n\n| chapter section | code | notes | tests |\n| --- | --- | --- | --- |\n\
             | norms; the layer | `src/residual.rs`, `src/encoder_layer.rs` (the layer) | `chapters/05-layers.md` | \
             `tests/encoder_layer.rs` |\n\
             | Layers again | `crates/checks/src/notebook.rs` | `chapters/homework-layers.md` | \
             `crates/notebooks/tests/notebooks.rs` |\n\
             | A GPT | `src/gpt/` (`x`); the PyTorch peer `scripts/gpt_pytorch.py` | `chapters/11-gpt.md` | \
             `tests/gpt.rs` |\n"
        );
    }

    #[test]
    fn lib_rs_names_each_module_s_chapters_and_keeps_its_notes() {
        // `%` for the comments' slashes, so that tests/architecture.rs does not take these for our comments.
        let lib = "%! x\npub mod residual; % chapters/11-gpt.md (wrong): the skip\npub mod encoder_layer;\n\
                   pub mod gpt; % chapters/05-layers.md (its (nested) note), chapters/11-gpt.md (kept)\n\
                   pub mod seeds; % a figure over seeds\n";
        assert_eq!(
            lib_rs(&made_up(), &lib.replace('%', "//")).unwrap(),
            "%! x\npub mod residual; % chapters/05-layers.md: the skip\n\
             pub mod encoder_layer; % chapters/05-layers.md\npub mod gpt; % chapters/11-gpt.md (kept)\n\
             pub mod seeds; % a figure over seeds\n"
                .replace('%', "//")
        );
        assert_eq!(
            lib_rs(&made_up(), "pub mod residual;\n").unwrap_err(),
            "src/lib.rs: no `pub mod encoder_layer;` for src/encoder_layer.rs, which chapters/05-layers.md names\n\
             src/lib.rs: no `pub mod gpt;` for src/gpt/, which chapters/11-gpt.md names"
        );
    }
}
