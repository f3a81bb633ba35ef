//! Which chapter is implemented by which files, and tested by which, is declared once: in each chapter's
//! own header, the one paragraph of `chapters/*.md` that starts `*Code:`, under its title (chapter 09's,
//! under its first section), which the notebook shows too:
//!
//! ```text
//! *Code: `src/x.rs` (notes), `src/y/` (…) · tests: `tests/x.rs` · exercises: `a`, `b` (…) ·
//! the PyTorch peer: `scripts/p.py`*
//! ```
//!
//! Segments are separated by ` · `, each `label: values`. A chapter's code is every backticked path (a name
//! with a `/`) of its `Code:` segment and of a segment whose label ends in `peer` (the program it is
//! measured against); its tests, those of its `tests:` segment; its exercises, the backticked names of its
//! `exercises:` (or `exercise:`) segment. Other segments (`command line:`, …) are for the reader only.
//!
//! Every other copy of that map is held to it here, and each difference is named with its file:
//! - README.md's chapter table: one row per chapter, its number, its chapter and notebook links, its
//!   exercises;
//! - docs/contributors.md's "The chapter, file by file": a chapter's rows name exactly its code and tests;
//! - src/lib.rs: each `pub mod x;` line's comment names exactly the chapters whose header names `src/x.rs`
//!   or something under `src/x/`;
//! - ARCHITECTURE.md's `src/` entry: every module a chapter names, first mentioned in the chapters' order.
#[path = "common/kept_back.rs"]
mod kept_back;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One chapter's header: the file (`05-layer-norm-and-encoder-layer.md`) and what it names.
#[derive(Debug, Default)]
struct Header {
    chapter: String,
    code: Vec<String>,
    tests: Vec<String>,
    exercises: Vec<String>,
}

impl Header {
    /// `chapters/NAME.md`, as the other copies name it.
    fn path(&self) -> String {
        format!("chapters/{}", self.chapter)
    }

    fn stem(&self) -> &str {
        self.chapter.trim_end_matches(".md")
    }
}

/// The text between backticks.
fn spans(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

/// The backticked names with a `/`: paths from the project's root.
fn paths(text: &str) -> Vec<String> {
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

/// The header of the chapter `name` whose text is `text`, or why there is none.
fn parse_header(name: &str, text: &str) -> Result<Header, String> {
    let lines = prose_lines(text);
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
    let inner = paragraph.trim().trim_start_matches('*').trim_end_matches('*');
    let mut header = Header { chapter: name.to_string(), ..Header::default() };
    for segment in inner.split(" · ") {
        let Some((label, values)) = segment.split_once(':') else { continue };
        match label.trim() {
            "Code" => header.code.extend(paths(values)),
            "tests" => header.tests.extend(paths(values)),
            "exercises" | "exercise" => header.exercises.extend(
                spans(values)
                    .filter(|s| {
                        !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                    })
                    .map(str::to_string),
            ),
            l if l.ends_with("peer") => header.code.extend(paths(values)),
            _ => {}
        }
    }
    if header.code.is_empty() || header.tests.is_empty() {
        return Err(format!("chapters/{name}: its *Code:* paragraph names no code or no tests: {inner}"));
    }
    Ok(header)
}

/// Every chapter's header, in the chapters' order (00 … 12, then the homework).
fn headers(root: &Path) -> Vec<Header> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("chapters"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".md"))
        .collect();
    names.sort();
    assert!(names.len() >= 14, "only {} chapters found", names.len());
    let (mut found, mut problems) = (Vec::new(), Vec::new());
    for name in names {
        match parse_header(&name, &std::fs::read_to_string(root.join("chapters").join(&name)).unwrap()) {
            Ok(h) => found.push(h),
            Err(e) => problems.push(e),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    found
}

/// The rows of the first Markdown table after the heading `heading`, as cells, header and rule left out.
fn table_rows(text: &str, heading: &str) -> Vec<Vec<String>> {
    let cells = |l: &str| l.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect::<Vec<_>>();
    let mut lines = text.lines().skip_while(|l| *l != heading);
    assert!(lines.next().is_some(), "no heading {heading}");
    let table = lines.skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|'));
    table.skip(2).map(cells).collect()
}

/// What `copied` leaves out of `declared`, and what it names beyond it.
fn difference(declared: &[String], copied: &BTreeSet<String>) -> (Vec<String>, Vec<String>) {
    let declared: BTreeSet<String> = declared.iter().cloned().collect();
    (declared.difference(copied).cloned().collect(), copied.difference(&declared).cloned().collect())
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

/// A chapter naming a module: its index in `headers` and the first path of the module it names.
type Naming = (usize, String);

/// For each module of the learner's crate that a header names, the chapters that name it, in order.
fn chapters_of_modules(headers: &[Header]) -> BTreeMap<String, Vec<Naming>> {
    let mut map: BTreeMap<String, Vec<Naming>> = BTreeMap::new();
    for (i, h) in headers.iter().enumerate() {
        for path in &h.code {
            let Some(module) = module_of(path) else { continue };
            let chapters = map.entry(module.to_string()).or_default();
            if !chapters.iter().any(|(c, _)| *c == i) {
                chapters.push((i, path.clone()));
            }
        }
    }
    map
}

/// README.md's chapter table against the headers.
fn readme_problems(headers: &[Header], readme: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let rows = table_rows(readme, "## The path through the chapter");
    let link = |cell: &str| cell.split_once("](").and_then(|(_, r)| r.split_once(')')).map(|(t, _)| t.to_string());
    for h in headers {
        let chapter = h.path();
        let mine: Vec<&Vec<String>> =
            rows.iter().filter(|r| r.get(1).and_then(|c| link(c)).as_deref() == Some(&chapter)).collect();
        let [row] = mine.as_slice() else {
            problems.push(format!("README.md: the chapter table has {} rows for {chapter}, not one", mine.len()));
            continue;
        };
        let number = if h.stem().starts_with("homework") { "hw" } else { h.stem().split('-').next().unwrap() };
        if row[0] != number {
            problems.push(format!("README.md: the row of {chapter} is numbered {}, not {number}", row[0]));
        }
        let notebook = format!("notebooks/{}.ipynb", h.stem());
        if row.get(2).and_then(|c| link(c)) != Some(notebook.clone()) {
            problems.push(format!("README.md: the row of {chapter} does not link its notebook {notebook}"));
        }
        let exercises: Vec<String> = row.get(4).map(|c| spans(c).map(str::to_string).collect()).unwrap_or_default();
        let (missing, extra) = difference(&h.exercises, &exercises.iter().cloned().collect());
        if !missing.is_empty() {
            let missing = missing.join(", ");
            problems.push(format!("README.md: the row of {chapter} leaves out {missing}, which its header names"));
        }
        if !extra.is_empty() {
            let extra = extra.join(", ");
            problems.push(format!("README.md: the row of {chapter} names {extra}, which its header does not"));
        }
        if missing.is_empty() && extra.is_empty() && exercises != h.exercises {
            problems
                .push(format!("README.md: the row of {chapter} lists its exercises in another order than its header"));
        }
    }
    for row in &rows {
        let chapter = row.get(1).and_then(|c| link(c)).unwrap_or_default();
        if !headers.iter().any(|h| h.path() == chapter) {
            problems.push(format!("README.md: a row of the chapter table links no chapter: {}", row.join(" | ")));
        }
    }
    problems
}

/// docs/contributors.md's "The chapter, file by file" against the headers.
fn contributors_problems(headers: &[Header], contributors: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut rows: BTreeMap<String, [BTreeSet<String>; 2]> = BTreeMap::new();
    for row in table_rows(contributors, "## The chapter, file by file") {
        let chapters = row.get(2).map(|c| paths(c)).unwrap_or_default();
        let [chapter] = chapters.as_slice() else {
            problems.push(format!(
                "docs/contributors.md: the row {} names {} chapters, not one",
                row[0],
                chapters.len()
            ));
            continue;
        };
        if !headers.iter().any(|h| &h.path() == chapter) {
            problems.push(format!("docs/contributors.md: the row {} names {chapter}, which is no chapter", row[0]));
        }
        let [code, tests] = rows.entry(chapter.clone()).or_default();
        code.extend(row.get(1).map(|c| paths(c)).unwrap_or_default());
        tests.extend(row.get(3).map(|c| paths(c)).unwrap_or_default());
    }
    for h in headers {
        let chapter = h.path();
        let Some([code, tests]) = rows.get(&chapter) else {
            problems.push(format!("docs/contributors.md: no row for {chapter}"));
            continue;
        };
        for (column, declared, copied) in [("code", &h.code, code), ("tests", &h.tests, tests)] {
            let (missing, extra) = difference(declared, copied);
            if !missing.is_empty() {
                let missing = missing.join(", ");
                problems.push(format!(
                    "docs/contributors.md: the {column} column of {chapter}'s rows leaves out {missing}, which its \
                     header names"
                ));
            }
            if !extra.is_empty() {
                let extra = extra.join(", ");
                problems.push(format!(
                    "docs/contributors.md: the {column} column of {chapter}'s rows names {extra}, which its header \
                     does not"
                ));
            }
        }
    }
    problems
}

/// src/lib.rs's `pub mod x; // chapters/…` comments against the headers.
fn lib_problems(headers: &[Header], lib: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let expected = chapters_of_modules(headers);
    let mut declared = BTreeSet::new();
    for line in lib.lines().map(str::trim) {
        let Some((module, after)) = line.strip_prefix("pub mod ").and_then(|r| r.split_once(';')) else { continue };
        declared.insert(module.to_string());
        let comment = after.split_once("//").map(|(_, c)| c).unwrap_or("");
        let named: BTreeSet<String> = comment
            .match_indices("chapters/")
            .filter_map(|(at, _)| comment[at..].find(".md").map(|end| comment[at..at + end + 3].to_string()))
            .collect();
        let want = expected.get(module).cloned().unwrap_or_default();
        let chapters: Vec<String> = want.iter().map(|(c, _)| headers[*c].path()).collect();
        let (missing, extra) = difference(&chapters, &named);
        for (c, path) in want.iter().filter(|(c, _)| missing.contains(&headers[*c].path())) {
            let chapter = headers[*c].path();
            problems.push(format!(
                "src/lib.rs: `pub mod {module};`'s comment leaves out {chapter}, whose header names {path}"
            ));
        }
        for chapter in extra {
            problems.push(format!(
                "src/lib.rs: `pub mod {module};`'s comment names {chapter}, whose header names neither src/{module}.rs \
                 nor anything under src/{module}/"
            ));
        }
    }
    for (module, chapters) in &expected {
        if !declared.contains(module) {
            let (c, path) = &chapters[0];
            problems.push(format!("src/lib.rs: no `pub mod {module};` for {path}, which {} names", headers[*c].path()));
        }
    }
    problems
}

/// ARCHITECTURE.md's `src/` entry against the headers: it names every module a chapter names, each first
/// mentioned no earlier than the modules of the chapters before the first that names it.
fn architecture_problems(headers: &[Header], architecture: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let entry: Vec<&str> = architecture
        .lines()
        .skip_while(|l| !l.starts_with("- `src/`"))
        .enumerate()
        .take_while(|(i, l)| *i == 0 || !(l.starts_with("- ") || l.starts_with('#')))
        .map(|(_, l)| l)
        .collect();
    if entry.is_empty() {
        return vec!["ARCHITECTURE.md: no entry starting - `src/`".to_string()];
    }
    // Each module as the first chapter that names it names it.
    let first: BTreeMap<String, Naming> =
        chapters_of_modules(headers).into_iter().map(|(m, chapters)| (m, chapters[0].clone())).collect();
    // The modules in the order the entry first mentions them: (module, chapter, the path mentioned).
    let mut seen: Vec<(String, usize, String)> = Vec::new();
    for path in paths(&entry.join("\n")) {
        let Some(module) = module_of(&path) else { continue };
        let Some(&(chapter, _)) = first.get(module) else { continue };
        if seen.iter().any(|(m, _, _)| m == module) {
            continue;
        }
        if let Some((_, later, before)) = seen.iter().find(|(_, c, _)| *c > chapter) {
            problems.push(format!(
                "ARCHITECTURE.md: the src/ entry names {path} ({}) after {before} ({}): not in the chapters' order",
                headers[chapter].path(),
                headers[*later].path()
            ));
        }
        seen.push((module.to_string(), chapter, path.clone()));
    }
    for (module, (chapter, path)) in &first {
        if !seen.iter().any(|(m, _, _)| m == module) {
            problems.push(format!(
                "ARCHITECTURE.md: the src/ entry does not name {path}, which {} names",
                headers[*chapter].path()
            ));
        }
    }
    problems
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(name: &str) -> String {
    std::fs::read_to_string(root().join(name)).unwrap()
}

#[test]
fn every_path_a_chapter_header_names_exists() {
    let (kept_back, students_copy) = kept_back::kept_back(root());
    let mut missing = Vec::new();
    for h in headers(root()) {
        for path in h.code.iter().chain(&h.tests) {
            let kept = students_copy && kept_back.iter().any(|k| path.starts_with(k.as_str()));
            if !root().join(path).exists() && !kept {
                missing.push(format!("{}: names {path}, which does not exist", h.path()));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_readme_table_has_each_chapter_its_notebook_and_its_exercises() {
    let problems = readme_problems(&headers(root()), &read("README.md"));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_contributors_table_names_each_chapter_s_code_and_tests() {
    let problems = contributors_problems(&headers(root()), &read("docs/contributors.md"));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn lib_rs_names_for_each_module_the_chapters_that_explain_it() {
    let problems = lib_problems(&headers(root()), &read("src/lib.rs"));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn architecture_md_names_the_chapters_modules_in_their_order() {
    let problems = architecture_problems(&headers(root()), &read("ARCHITECTURE.md"));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The checks themselves, on made-up copies: a drift of each kind is named, with its file.
#[test]
fn a_made_up_drift_is_named_in_each_copy() {
    let header =
        "# 5 · Layers\n\n*Code: `src/residual.rs`, `src/encoder_layer.rs` · tests: `tests/encoder_layer.rs` ·\n\
                  exercises: `layer_norm` (`cargo anatomy exercises watch`)*\n\n```\n*Code: `src/not_a_header.rs`\n```\n";
    let five = parse_header("05-layers.md", header).unwrap();
    assert_eq!(five.code, ["src/residual.rs", "src/encoder_layer.rs"]);
    assert_eq!(
        (five.tests.join(" "), five.exercises.join(" ")),
        ("tests/encoder_layer.rs".into(), "layer_norm".into())
    );
    let peer = "*Code: `src/gpt/` (`x`) · tests: `tests/gpt.rs` · the PyTorch\npeer: `scripts/gpt_pytorch.py` · \
                command line: `cargo anatomy gpt`*";
    let eleven = parse_header("11-gpt.md", peer).unwrap();
    assert_eq!(eleven.code, ["src/gpt/", "scripts/gpt_pytorch.py"]);
    assert!(parse_header("09-x.md", "# 9\n\nno header").unwrap_err().contains("0 paragraphs"));
    let headers = [five, eleven];

    let readme = "## The path through the chapter\n\n| # | chapter | notebook | what | exercises |\n\
                  | --- | --- | --- | --- | --- |\n\
                  | 05 | [layers](chapters/05-layers.md) | [ipynb](notebooks/05-layers.ipynb) | x | \
                  `layer_norm`, `x` |\n";
    assert_eq!(
        readme_problems(&headers, readme),
        [
            "README.md: the row of chapters/05-layers.md names x, which its header does not",
            "README.md: the chapter table has 0 rows for chapters/11-gpt.md, not one",
        ]
    );
    let contributors =
        "## The chapter, file by file\n\n| section | code | notes | tests |\n| --- | --- | --- | --- |\n\
                        | layers | `src/encoder_layer.rs` | `chapters/05-layers.md` | `tests/encoder_layer.rs` |\n\
                        | a GPT | `src/gpt/` (`text.rs`), `src/seeds.rs`; peer `scripts/gpt_pytorch.py` | \
                        `chapters/11-gpt.md` | `tests/gpt.rs` |\n";
    assert_eq!(
        contributors_problems(&headers, contributors),
        [
            "docs/contributors.md: the code column of chapters/05-layers.md's rows leaves out src/residual.rs, \
             which its header names",
            "docs/contributors.md: the code column of chapters/11-gpt.md's rows names src/seeds.rs, which its header \
             does not",
        ]
    );
    let lib = "pub mod residual; // chapters/05-layers.md\npub mod encoder_layer; // chapters/11-gpt.md\npub mod x;\n";
    assert_eq!(
        lib_problems(&headers, lib),
        [
            "src/lib.rs: `pub mod encoder_layer;`'s comment leaves out chapters/05-layers.md, whose header names \
             src/encoder_layer.rs",
            "src/lib.rs: `pub mod encoder_layer;`'s comment names chapters/11-gpt.md, whose header names neither \
             src/encoder_layer.rs nor anything under src/encoder_layer/",
            "src/lib.rs: no `pub mod gpt;` for src/gpt/, which chapters/11-gpt.md names",
        ]
    );
    let architecture = "# A\n\n- `src/` — the crate: `src/lib.rs`, `src/gpt/`,\n  `src/encoder_layer.rs`, `src/x.rs`\n\
                        - `crates/` — `src/residual.rs`\n";
    assert_eq!(
        architecture_problems(&headers, architecture),
        [
            "ARCHITECTURE.md: the src/ entry names src/encoder_layer.rs (chapters/05-layers.md) after src/gpt/ \
             (chapters/11-gpt.md): not in the chapters' order",
            "ARCHITECTURE.md: the src/ entry does not name src/residual.rs, which chapters/05-layers.md names",
        ]
    );
}
