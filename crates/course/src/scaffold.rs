//! `anatomy exercises new NAME`: the files of a new exercise, so that adding one touches its declaration,
//! its stub, solution, hints, check and wrong answers and nothing else (exercises/README.md, "Adding an
//! exercise"). Every file is written from one [`NewExercise`]: the declaration's entry (above the line
//! that [`ANCHOR`] marks in `for_each_exercise!`), the stub, a solution and wrong answers that are still
//! `todo!()`, numbered hints to fill in, and a check that fails until it is written, so that `cargo test`
//! names each part still missing. Nothing is written unless all of it can be.
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};

use crate::{EXERCISES, WRONG_ANSWERS_NEEDED};

/// The line of `for_each_exercise!` above which a new exercise's entry goes.
pub const ANCHOR: &str = "            // `anatomy exercises new` declares the next exercise above this line.\n";

/// What `anatomy exercises new` is told.
#[derive(Debug, Clone)]
pub struct NewExercise {
    pub name: String,
    /// The chapter that explains the step (`chapters/CHAPTER.md`).
    pub chapter: String,
    /// What it asks, in a line.
    pub summary: String,
    pub points: u32,
    /// The student function's arguments, each a `&Tensor` (the author changes the types as needed).
    pub args: Vec<String>,
    /// The module of `crates/checks/src/checks/` that gets the check.
    pub module: String,
    /// The ids of the mistakes the check will name, one wrong answer each.
    pub mistakes: Vec<String>,
}

/// A name Rust and the file system both take as it is: lower-case ASCII, digits and `_`, at most 40.
fn is_snake(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && name.len() <= 40
}

impl NewExercise {
    /// Refuses, in one line that names the fix, what would not make a declarable exercise.
    fn validate(&self, root: &Path) -> Result<()> {
        for (what, name) in std::iter::once(("the exercise's name", &self.name))
            .chain(self.args.iter().map(|a| ("an argument", a)))
            .chain(self.mistakes.iter().map(|m| ("a mistake's id", m)))
        {
            ensure!(is_snake(name), "{what} {name:?} must be lower-case letters, digits and _ (at most 40)");
        }
        ensure!(!EXERCISES.iter().any(|e| e.name == self.name), "an exercise named {} is declared already", self.name);
        ensure!(!self.args.is_empty(), "the function needs an argument: give --args, e.g. --args x");
        ensure!(!self.summary.trim().is_empty() && !self.summary.contains('\n'), "give --summary, in one line");
        let chapter = root.join("chapters").join(format!("{}.md", self.chapter));
        ensure!(
            !self.chapter.is_empty()
                && self.chapter.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && chapter.is_file(),
            "no chapter {}: give --chapter as a file name of chapters/ without .md, e.g. 08-decoder-and-masking",
            chapter.display()
        );
        let module = self.check_module(root);
        ensure!(
            is_snake(&self.module) && self.module != "mod" && module.is_file(),
            "no checks module {}: give --module as a file name of crates/checks/src/checks/ without .rs",
            module.display()
        );
        let mut ids = self.mistakes.clone();
        ids.sort();
        ids.dedup();
        ensure!(
            ids.len() == self.mistakes.len() && ids.len() >= WRONG_ANSWERS_NEEDED,
            "name {WRONG_ANSWERS_NEEDED} or more different mistakes, each with --mistake ID (one wrong answer each)"
        );
        Ok(())
    }

    fn check_module(&self, root: &Path) -> PathBuf {
        root.join("crates/checks/src/checks").join(format!("{}.rs", self.module))
    }

    /// The function's signature, `NAME(a: &Tensor, …) -> Tensor`.
    fn signature(&self) -> String {
        let args: Vec<String> = self.args.iter().map(|a| format!("{a}: &Tensor")).collect();
        format!("pub fn {}({}) -> Tensor", self.name, args.join(", "))
    }

    /// The declaration's entry, in the layout of the others.
    fn entry(&self) -> String {
        format!(
            "            {name} {{\n                chapter: {chapter:?}, homework: false, points: {points},\n                \
             functions: [{name}({args})],\n                summary: {summary:?},\n                \
             uses: [], forbids: [], check: {module}::{upper},\n            }},\n",
            name = self.name,
            chapter = self.chapter,
            points = self.points,
            args = self.args.join(", "),
            summary = self.summary.trim(),
            module = self.module,
            upper = self.name.to_uppercase(),
        )
    }

    /// The check and its named mistakes, appended to the checks module: it fails until it is written.
    fn check(&self) -> String {
        let upper = self.name.to_uppercase();
        let consts: Vec<String> = self.mistakes.iter().map(|m| format!("{upper}_{}", m.to_uppercase())).collect();
        let mut text = format!(
            "\n/// The named mistakes of `{}`.\npub const {upper}: &[super::Mistake] = &[{}];\n",
            self.name,
            consts.join(", ")
        );
        for (id, name) in self.mistakes.iter().zip(&consts) {
            text += &format!("const {name}: super::Mistake = super::Mistake({id:?});\n");
        }
        let tensors = vec!["&tch::Tensor"; self.args.len()].join(", ");
        text += &format!(
            "\n/// `{name}({args})`: {summary}. Written by `cargo anatomy exercises new`: draw the inputs (`randn`), call\n\
             /// the student's function through `call`, compare with an independent computation and name each\n\
             /// mistake above (`expect_close_or_name`), as the checks above do.\n\
             pub fn {name}(f: &dyn Fn({tensors}) -> tch::Tensor) -> super::CheckResult {{\n    let _ = f;\n    \
             Err(\"the check of {name} is not written yet (crates/checks/src/checks/{module}.rs)\".into())\n}}\n",
            name = self.name,
            args = self.args.join(", "),
            summary = self.summary.trim().trim_end_matches('.'),
            module = self.module,
        );
        text
    }

    /// Every new file, with its text.
    fn files(&self, root: &Path) -> Vec<(PathBuf, String)> {
        let (name, signature) = (&self.name, self.signature());
        let stub = format!(
            "//! {summary} (chapters/{chapter}.md). Say here what the function takes and gives, with shapes, and\n\
             //! what must hold, as the other stubs do: this is what the student reads first.\n\
             #![allow(unused_variables)]\nuse tch::Tensor;\n\n{signature} {{\n    todo!({todo:?})\n}}\n",
            summary = self.summary.trim(),
            chapter = self.chapter,
            todo = self.summary.trim(),
        );
        let solution =
            format!("use tch::Tensor;\n\n{signature} {{\n    todo!(\"the reference solution of {name}\")\n}}\n");
        let hints = format!(
            "# Hints: {name}\n\n1. The first hint: where to start, without giving the answer away.\n\
             2. The second: the step that is easy to get wrong.\n3. The last: nearly the answer.\n"
        );
        let mut files = vec![
            (root.join("crates/course/src/stubs").join(format!("{name}.rs")), stub),
            (root.join("solutions").join(format!("{name}.rs")), solution),
            (root.join("exercises/hints").join(format!("{name}.md")), hints),
        ];
        for id in &self.mistakes {
            let wrong = format!(
                "//! expect: the words the check says of {id}\nuse tch::Tensor;\n\n{signature} {{\n    \
                 todo!(\"{id}, written out: the reference solution with this mistake\")\n}}\n"
            );
            files.push((root.join("tests/exercise-mistakes").join(name).join(format!("{id}.rs")), wrong));
        }
        files
    }
}

/// Writes the new exercise's files into the project at `root` and returns them, changed files last.
/// Refuses (writing nothing) a name already declared or whose files exist, an unknown chapter or checks
/// module, fewer named mistakes than [`WRONG_ANSWERS_NEEDED`], or a declaration without [`ANCHOR`].
pub fn new_exercise(root: &Path, new: &NewExercise) -> Result<Vec<PathBuf>> {
    new.validate(root)?;
    let files = new.files(root);
    if let Some((path, _)) = files.iter().find(|(path, _)| path.exists()) {
        bail!("{} exists already: remove it, or choose another name", path.display());
    }
    let declaration = root.join("crates/course/src/lib.rs");
    let text = std::fs::read_to_string(&declaration).with_context(|| format!("reading {}", declaration.display()))?;
    ensure!(
        text.matches(ANCHOR).count() == 1,
        "{} has no line {:?} in for_each_exercise!: put it back above the macro's closing brace",
        declaration.display(),
        ANCHOR.trim()
    );
    let module = new.check_module(root);
    let checks = std::fs::read_to_string(&module).with_context(|| format!("reading {}", module.display()))?;
    let changed =
        [(declaration, text.replace(ANCHOR, &format!("{}{ANCHOR}", new.entry()))), (module, checks + &new.check())];
    let mut written = Vec::new();
    let result = (|| -> Result<()> {
        for (path, text) in &files {
            std::fs::create_dir_all(path.parent().expect("a file in a folder"))?;
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            written.push(path.clone());
        }
        // The two changed files last, each replaced whole (a rename), so that neither is half-written.
        for (path, text) in &changed {
            crate::write_whole(path, text)?;
        }
        Ok(())
    })();
    if let Err(error) = result {
        for path in &written {
            let _ = std::fs::remove_file(path);
        }
        return Err(error);
    }
    Ok(files.into_iter().map(|(p, _)| p).chain(changed.into_iter().map(|(p, _)| p)).collect())
}

/// Writes the table of the exercises ([`crate::markdown_table`]) over the one in exercises/README.md, whole
/// (a rename), and returns that file.
pub fn write_table() -> Result<PathBuf> {
    let path = crate::project_root().join("exercises/README.md");
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let Some(new) = replace_table(&text, &crate::markdown_table()) else {
        bail!("{} has no table of exercises: paste `cargo anatomy exercises table` into it", path.display());
    };
    crate::write_whole(&path, &new)?;
    Ok(path)
}

/// Puts `table` (a Markdown table, [`crate::markdown_table`]) over the first table of `text` that has the
/// same header line; `None` when there is none.
pub fn replace_table(text: &str, table: &str) -> Option<String> {
    let header = table.lines().next()?;
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| *l == header)?;
    let end = start + lines[start..].iter().take_while(|l| l.starts_with('|')).count();
    let mut out: Vec<&str> = lines[..start].to_vec();
    out.extend(table.lines());
    out.extend(&lines[end..]);
    Some(out.join("\n") + if text.ends_with('\n') { "\n" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy() -> NewExercise {
        NewExercise {
            name: "toy_double".into(),
            chapter: "00-overview".into(),
            summary: "twice its \"input\"".into(),
            points: 3,
            args: vec!["x".into(), "y".into()],
            module: "encoder".into(),
            mistakes: vec!["tripled".into(), "halved".into()],
        }
    }

    #[test]
    fn the_entry_and_the_check_are_rust_in_the_layout_of_the_others() {
        let entry = toy().entry();
        assert!(entry.starts_with(
            "            toy_double {\n                chapter: \"00-overview\", homework: false, points: 3,"
        ));
        assert!(
            entry.contains("functions: [toy_double(x, y)],") && entry.contains("summary: \"twice its \\\"input\\\"\",")
        );
        assert!(entry.ends_with("check: encoder::TOY_DOUBLE,\n            },\n"), "{entry}");
        let check = toy().check();
        assert!(check.contains("pub const TOY_DOUBLE: &[super::Mistake] = &[TOY_DOUBLE_TRIPLED, TOY_DOUBLE_HALVED];"));
        assert!(check.contains("const TOY_DOUBLE_HALVED: super::Mistake = super::Mistake(\"halved\");"));
        assert!(check.contains("pub fn toy_double(f: &dyn Fn(&tch::Tensor, &tch::Tensor) -> tch::Tensor)"), "{check}");
    }

    #[test]
    fn a_name_that_is_not_snake_case_or_too_few_mistakes_are_refused_in_one_line() {
        let root = crate::project_root();
        let mut bad = toy();
        bad.name = "Toy-Double".into();
        assert!(bad.validate(&root).unwrap_err().to_string().contains("lower-case letters"));
        let mut few = toy();
        few.mistakes = vec!["tripled".into(), "tripled".into()];
        let error = few.validate(&root).unwrap_err().to_string();
        assert!(error.starts_with(&format!("name {WRONG_ANSWERS_NEEDED} or more different mistakes")), "{error}");
        let mut taken = toy();
        taken.name = "layer_norm".into();
        assert_eq!(taken.validate(&root).unwrap_err().to_string(), "an exercise named layer_norm is declared already");
        let mut chapter = toy();
        chapter.chapter = "../README".into();
        assert!(chapter.validate(&root).unwrap_err().to_string().starts_with("no chapter"));
        toy().validate(&root).unwrap();
    }

    #[test]
    fn the_table_is_replaced_where_its_header_is_and_nowhere_else() {
        let text = "intro\n| # | a |\n| --- | --- |\n| 1 | x |\n\nafter\n| # | a |\n";
        let new = replace_table(text, "| # | a |\n| --- | --- |\n| 1 | x |\n| 2 | y |\n").unwrap();
        assert_eq!(new, "intro\n| # | a |\n| --- | --- |\n| 1 | x |\n| 2 | y |\n\nafter\n| # | a |\n");
        assert_eq!(replace_table("no table\n", "| # | a |\n"), None);
    }
}
