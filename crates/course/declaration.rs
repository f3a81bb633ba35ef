//! The exercises' declaration, `crates/course/exercises.toml`, as it is read: by this crate's build script
//! (the list `EXERCISES`), by `crates/checks/build.rs` (the checks' registry and their named mistakes) and
//! by this crate's tests (the list is the file's, in the file's order). Each includes this file, so that
//! one reader says what a table may hold; a table that breaks a rule stops the build with one line that
//! names the exercise, the key and the fix.
use std::path::Path;

use serde::Deserialize;

/// The file: its tables, in course order.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    exercise: Vec<Declared>,
}

/// One `[[exercise]]` table (the file's header says what each key is).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declared {
    pub name: String,
    pub chapter: String,
    pub homework: bool,
    pub points: f64,
    /// Each as written, `NAME(first, second)`; [`Declared::functions`] splits them.
    functions: Vec<String>,
    pub summary: String,
    pub uses: Vec<String>,
    pub forbids: Vec<String>,
    pub check: String,
    pub mistakes: Vec<String>,
}

/// A name Rust and the file system both take as it is: lower-case ASCII letters, digits and `_`,
/// starting with a letter.
pub fn is_snake(name: &str) -> bool {
    name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// A constant's name for a snake-case one: `no_eps` → `NO_EPS`.
pub fn upper(name: &str) -> String {
    name.to_ascii_uppercase()
}

impl Declared {
    /// The functions, each with its arguments: `split_heads(x, num_heads)` → (`split_heads`, [`x`,
    /// `num_heads`]).
    pub fn functions(&self) -> Vec<(String, Vec<String>)> {
        self.functions
            .iter()
            .filter_map(|f| {
                let (name, rest) = f.split_once('(')?;
                let args = rest.strip_suffix(')')?;
                let args = args.split(',').map(str::trim).filter(|a| !a.is_empty()).map(String::from).collect();
                Some((name.trim().to_string(), args))
            })
            .collect()
    }

    /// What is wrong with this table, in one line, if anything.
    fn problem(&self) -> Option<String> {
        let name = &self.name;
        let functions = self.functions();
        let words: Vec<&String> = functions.iter().flat_map(|(f, args)| std::iter::once(f).chain(args)).collect();
        let mut mistakes = self.mistakes.clone();
        mistakes.sort();
        mistakes.dedup();
        let problem = if !is_snake(name) {
            "`name`: lower-case letters, digits and _, starting with a letter"
        } else if self.chapter.is_empty() || !self.chapter.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            "`chapter`: a file name of chapters/ without .md, e.g. 08-decoder-and-masking"
        } else if !(self.points.is_finite() && self.points >= 0.0 && self.points.is_sign_positive()) {
            "`points`: a number of at least 0 (not -0)"
        } else if functions.len() != self.functions.len() || functions.is_empty() || !words.iter().all(|w| is_snake(w))
        {
            "`functions`: one or more, each written NAME(first, second) with snake-case names"
        } else if self.summary.trim().is_empty() || self.summary.contains('\n') {
            "`summary`: what it asks, in one line"
        } else if !is_snake(&self.check) || self.check == "mod" {
            "`check`: a file name of crates/checks/src/checks/ without .rs"
        } else if !self.forbids.iter().all(|f| is_snake(f)) {
            "`forbids`: the families' names of crates/course/src/forbidden.rs, e.g. \"norms\""
        } else if !self.mistakes.iter().all(|m| is_snake(m)) || mistakes.len() != self.mistakes.len() {
            "`mistakes`: different snake-case ids, e.g. \"no_eps\""
        } else {
            return None;
        };
        Some(format!("the exercise {name:?}: {problem}"))
    }
}

/// The exercises declared in `text` (the file `exercises.toml`), in course order, or what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<Declared>, String> {
    let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
    let mut seen = std::collections::BTreeSet::new();
    for e in &file.exercise {
        if let Some(problem) = e.problem() {
            return Err(problem);
        }
        if !seen.insert(e.name.as_str()) {
            return Err(format!("the exercise {:?} is declared twice", e.name));
        }
    }
    Ok(file.exercise)
}

/// The exercises declared in the file at `path`; what is wrong with it names the file.
pub fn read(path: &Path) -> Result<Vec<Declared>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}
