//! The new exercise's files, each laid out as the course's others are (a stub's title, task, chapter and
//! check lines; a solution's and a wrong answer's first lines; the hints' title and numbered levels; a
//! shortcut's `//! expect:` line), and its check, appended to its checks module: each still to be written
//! where it says so, and each failing its test until it is.
use std::path::{Path, PathBuf};

use super::NewExercise;
use crate::forbidden::FAMILIES;

impl NewExercise {
    /// The function's signature, `NAME(a: &Tensor, …) -> Tensor`.
    fn signature(&self) -> String {
        let args: Vec<String> = self.args.iter().map(|a| format!("{a}: &Tensor")).collect();
        format!("pub fn {}({}) -> Tensor", self.name, args.join(", "))
    }

    /// What the exercise forbids, in words: the first family's (its shortcut's `//! expect:` line).
    fn forbidden_words(&self) -> Option<&'static str> {
        let first = self.forbids.first()?;
        FAMILIES.iter().find(|f| f.name == first).map(|f| f.what)
    }

    /// The check, appended to the checks module: it fails until it is written. Its named mistakes are the
    /// declaration's (`mistakes`): constants of the module, `NO_EPS` for `no_eps`.
    pub(super) fn check(&self) -> String {
        let consts: Vec<String> = self.mistakes.iter().map(|m| m.to_uppercase()).collect();
        let tensors = vec!["&tch::Tensor"; self.args.len()].join(", ");
        format!(
            "\n/// `{name}({args})`: {summary}. Written by `cargo anatomy exercises new`: draw the inputs (`randn`), call\n\
             /// the student's function through `call`, compare with an independent computation and name each\n\
             /// mistake the declaration lists ({consts}: `expect_close_or_name`), as the checks above do.\n\
             pub fn {name}(f: &dyn Fn({tensors}) -> tch::Tensor) -> super::CheckResult {{\n    let _ = f;\n    \
             Err(\"the check of {name} is not written yet (crates/checks/src/checks/{module}.rs)\".into())\n}}\n",
            name = self.name,
            args = self.args.join(", "),
            summary = self.summary.trim().trim_end_matches('.'),
            consts = consts.join(", "),
            module = self.module,
        )
    }

    /// Every new file, with its text.
    pub(super) fn files(&self, root: &Path) -> Vec<(PathBuf, String)> {
        let (name, signature, summary) = (&self.name, self.signature(), self.summary.trim());
        let stub = format!(
            "//! # Exercise: {summary}\n//!\n\
             //! Say here what the function takes and gives, with shapes, and what must hold, as the other stubs do:\n\
             //! this is what the student reads first.\n//!\n\
             //! Chapter: `chapters/{chapter}.md`.\n\
             //! Check: `cargo anatomy exercises check {name}`; hints: `exercises/hints/{name}.md`.\n\
             #![allow(unused_variables)] // remove once the body is written\nuse tch::Tensor;\n\n\
             {signature} {{\n    todo!({summary:?})\n}}\n",
            chapter = self.chapter,
        );
        let solution = format!(
            "//! Reference solution (see `exercises/{name}.rs` for the task).\nuse tch::Tensor;\n\n\
             {signature} {{\n    todo!(\"the reference solution of {name}\")\n}}\n"
        );
        let hints = format!(
            "# Hints: {summary}\n\n1. The first hint: where to start, without giving the answer away.\n\
             2. The second: the step that is easy to get wrong.\n3. The last: nearly the answer.\n"
        );
        let mut files = vec![
            (root.join("crates/course/src/stubs").join(format!("{name}.rs")), stub),
            (root.join("solutions").join(format!("{name}.rs")), solution),
            (root.join("exercises/hints").join(format!("{name}.md")), hints),
        ];
        for id in &self.mistakes {
            let wrong = format!(
                "//! A plausible wrong answer to `{name}`; the grader must fail it.\n\
                 //! expect: the words the check says of {id}\nuse tch::Tensor;\n\n{signature} {{\n    \
                 todo!(\"{id}, written out: the reference solution with this mistake\")\n}}\n"
            );
            files.push((root.join("tests/exercise-mistakes").join(name).join(format!("{id}.rs")), wrong));
        }
        if let Some(what) = self.forbidden_words() {
            let shortcut = format!(
                "//! expect: {what}\n\
                 //! Calls {what}, which computes what the exercise asks: the rules must refuse it.\n\
                 use tch::Tensor;\n\n{signature} {{\n    \
                 todo!(\"the one call of {what} that does the whole exercise\")\n}}\n"
            );
            files.push((root.join("tests/hostile-class/shortcuts").join(format!("{name}.rs")), shortcut));
        }
        files
    }
}
