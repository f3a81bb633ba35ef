//! `anatomy exercises new NAME`: a new exercise, so that adding one touches its table in the declaration,
//! its stub, solution, hints, check and wrong answers (and its shortcut, if it forbids something) and
//! nothing else (exercises/README.md, "Adding an exercise"). Every file is written from one
//! [`NewExercise`]: its table in `crates/course/exercises.toml`, below the exercise it comes after
//! (`table.rs`), and the files, each laid out as the others are and still `todo!()` where the author
//! writes (`files.rs`), so that `cargo test` names each part still missing. Nothing is written unless all
//! of it can be.
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};

use crate::forbidden::FAMILIES;
use crate::{DECLARATION, WRONG_ANSWERS_NEEDED};

mod files;
mod table;

/// What `anatomy exercises new` is told.
#[derive(Debug, Clone)]
pub struct NewExercise {
    pub name: String,
    /// The exercise it comes after in the course (`--after`); `None`: last.
    pub after: Option<String>,
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
    /// The families of finished operations it forbids (`crate::forbidden`, by name: `norms`).
    pub forbids: Vec<String>,
}

/// A name Rust and the file system both take as it is: lower-case ASCII, digits and `_`, at most 40.
fn is_snake(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && name.len() <= 40
}

impl NewExercise {
    /// Refuses, in one line that names the flag to give, what would not make a declarable exercise; the
    /// names declared already are read from the declaration's text (`declared`).
    fn validate(&self, root: &Path, declared: &str) -> Result<()> {
        for (what, name) in std::iter::once(("the exercise's name", &self.name))
            .chain(self.args.iter().map(|a| ("--args: an argument", a)))
            .chain(self.mistakes.iter().map(|m| ("--mistakes: a mistake's id", m)))
        {
            ensure!(is_snake(name), "{what} {name:?} must be lower-case letters, digits and _ (at most 40)");
        }
        let names: Vec<String> = table::tables(declared).into_iter().map(|(name, _)| name).collect();
        ensure!(!names.contains(&self.name), "an exercise named {} is declared already", self.name);
        ensure!(!self.args.is_empty(), "the function needs an argument: give --args, e.g. --args x,mask");
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
            "name {WRONG_ANSWERS_NEEDED} or more different mistakes, one wrong answer each: --mistakes first_id,second_id"
        );
        let families: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
        if let Some(unknown) = self.forbids.iter().find(|f| !families.contains(&f.as_str())) {
            bail!("--forbids {unknown}: no such family; give some of {}, e.g. --forbids norms", families.join(","));
        }
        if let Some(after) = self.after.as_ref().filter(|a| !names.contains(a)) {
            bail!("--after {after}: no exercise of that name is declared; choose one of {}", names.join(", "));
        }
        Ok(())
    }

    fn check_module(&self, root: &Path) -> PathBuf {
        root.join("crates/checks/src/checks").join(format!("{}.rs", self.module))
    }
}

/// Writes the new exercise into the project at `root` and returns the files, changed ones last: its
/// table in the declaration, below `after`'s or last, and its files. Refuses (writing nothing) a name
/// already declared or whose files exist, an unknown chapter, checks module, family or `after`, and fewer
/// named mistakes than [`WRONG_ANSWERS_NEEDED`].
pub fn new_exercise(root: &Path, new: &NewExercise) -> Result<Vec<PathBuf>> {
    let declaration = root.join(DECLARATION);
    let text = std::fs::read_to_string(&declaration).with_context(|| format!("reading {}", declaration.display()))?;
    new.validate(root, &text)?;
    let files = new.files(root);
    // A link, even one to nowhere, counts as there: nothing is written through it.
    if let Some((path, _)) = files.iter().find(|(path, _)| path.symlink_metadata().is_ok()) {
        bail!("{} exists already: remove it, or choose another name", path.display());
    }
    let module = new.check_module(root);
    let checks = std::fs::read_to_string(&module).with_context(|| format!("reading {}", module.display()))?;
    let (declaration_text, checks_text) = (text.clone(), checks.clone());
    let changed = [(declaration, table::insert(&text, new)), (module, checks + &new.check())];
    let mut written = Vec::new();
    let result = (|| -> Result<()> {
        for (path, text) in &files {
            std::fs::create_dir_all(path.parent().expect("a file in a folder"))?;
            crate::write_whole(path, text)?;
            written.push(path.clone());
        }
        // The two changed files last, each replaced whole (a rename), so that neither is half-written; the
        // checks module before the declaration, whose new table would name files a failure removes.
        for (path, text) in changed.iter().rev() {
            crate::write_whole(path, text)?;
            written.push(path.clone());
        }
        Ok(())
    })();
    if let Err(error) = result {
        // Undone: the new files removed, a changed file given its text back.
        for path in &written {
            match [(&declaration_text, &changed[0].0), (&checks_text, &changed[1].0)].iter().find(|(_, p)| *p == path) {
                Some((old, _)) => {
                    let _ = crate::write_whole(path, old);
                }
                None => {
                    let _ = std::fs::remove_file(path);
                }
            }
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
            after: Some("feed_forward".into()),
            chapter: "00-overview".into(),
            summary: "twice its \"input\"".into(),
            points: 3,
            args: vec!["x".into(), "y".into()],
            module: "encoder".into(),
            mistakes: vec!["tripled".into(), "halved".into()],
            forbids: vec!["norms".into()],
        }
    }

    /// Three tables, the second with a comment line above it, which stays with it.
    const DECLARED: &str =
        "# the file's header\n\n[[exercise]]\nname = \"a\"\n\n# about b\n[[exercise]]\nname = \"b\"\n\n\
                            [[exercise]]\nname = \"feed_forward\"\n";

    #[test]
    fn the_table_is_toml_in_the_layout_of_the_others_and_goes_below_the_one_it_comes_after() {
        let table = toy().table();
        assert_eq!(
            table,
            "[[exercise]]\nname = \"toy_double\"\nchapter = \"00-overview\"\nhomework = false\npoints = 3\n\
             functions = [\"toy_double(x, y)\"]\nsummary = \"twice its \\\"input\\\"\"\nuses = []\nforbids = [\"norms\"]\n\
             check = \"encoder\"\nmistakes = [\"tripled\", \"halved\"]\n"
        );
        let names = |text: &str| -> Vec<String> { table::tables(text).into_iter().map(|(n, _)| n).collect() };
        assert_eq!(names(DECLARED), ["a", "b", "feed_forward"]);
        // A table whose name is written another way is not given the next table's name.
        assert_eq!(names("[[exercise]]\nname='q'\n\n[[exercise]]\nname = \"r\"\n"), ["", "r"]);
        let mut new = toy();
        new.after = Some("a".into());
        let text = table::insert(DECLARED, &new);
        assert_eq!(names(&text), ["a", "toy_double", "b", "feed_forward"]);
        assert!(text.contains(&format!("name = \"a\"\n\n{table}\n# about b\n[[exercise]]")), "{text}");
        new.after = None;
        assert!(table::insert(DECLARED, &new).ends_with(&format!("name = \"feed_forward\"\n\n{table}")));
        // The declaration as it is: every table found, in order, and the new one below feed_forward.
        let text = std::fs::read_to_string(crate::project_root().join(DECLARATION)).unwrap();
        let declared: Vec<&str> = crate::EXERCISES.iter().map(|e| e.name).collect();
        assert_eq!(names(&text), declared);
        let at = crate::find("feed_forward").unwrap().number();
        assert_eq!(names(&table::insert(&text, &toy()))[at], "toy_double");
    }

    #[test]
    fn the_check_names_the_declared_mistakes_and_the_files_include_a_shortcut_for_what_it_forbids() {
        let check = toy().check();
        assert!(check.contains("pub fn toy_double(f: &dyn Fn(&tch::Tensor, &tch::Tensor) -> tch::Tensor)"), "{check}");
        assert!(check.contains("(TRIPLED, HALVED: `expect_close_or_name`)"), "{check}");
        let root = Path::new("/r");
        let files = toy().files(root);
        let shortcut = &files.last().unwrap();
        assert_eq!(shortcut.0, root.join("tests/hostile-class/shortcuts/toy_double.rs"));
        assert!(shortcut.1.starts_with("//! expect: libtorch's finished normalisation\n"), "{}", shortcut.1);
        let mut free = toy();
        free.forbids.clear();
        assert_eq!(free.files(root).len(), 3 + 2, "stub, solution, hints and a wrong answer per mistake");
    }

    #[test]
    fn what_is_not_declarable_is_refused_in_one_line_naming_the_flag() {
        let root = crate::project_root();
        let declared = std::fs::read_to_string(root.join(DECLARATION)).unwrap();
        let refusal = |change: &dyn Fn(&mut NewExercise)| {
            let mut new = toy();
            change(&mut new);
            new.validate(&root, &declared).unwrap_err().to_string()
        };
        assert!(refusal(&|n| n.name = "Toy-Double".into()).contains("lower-case letters"));
        let few = refusal(&|n| n.mistakes = vec!["tripled".into(), "tripled".into()]);
        assert!(
            few.starts_with(&format!("name {WRONG_ANSWERS_NEEDED} or more"))
                && few.contains("--mistakes first_id,second_id"),
            "{few}"
        );
        assert_eq!(refusal(&|n| n.name = "layer_norm".into()), "an exercise named layer_norm is declared already");
        assert!(refusal(&|n| n.chapter = "../README".into()).starts_with("no chapter"));
        assert!(refusal(&|n| n.forbids = vec!["sorting".into()]).starts_with("--forbids sorting: no such family"));
        assert!(refusal(&|n| n.after = Some("nothing".into())).starts_with("--after nothing: no exercise"));
        assert!(refusal(&|n| n.args = vec!["X".into()]).starts_with("--args: an argument \"X\""));
        toy().validate(&root, &declared).unwrap();
    }

    /// A failure after some files are written undoes them: here the declaration, a link, is refused last.
    #[test]
    fn a_failed_write_leaves_the_project_as_it_was() {
        let root = crate::test_dir::TestDir::new("course-scaffold");
        let project = crate::project_root();
        let (declaration, module) = (root.join(DECLARATION), toy().check_module(&root));
        for (from, to) in
            [(project.join(DECLARATION), root.join("declared.toml")), (toy().check_module(&project), module.clone())]
        {
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(from, to).unwrap();
        }
        std::fs::create_dir_all(declaration.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(root.join("declared.toml"), &declaration).unwrap();
        std::fs::create_dir_all(root.join("chapters")).unwrap();
        std::fs::write(root.join("chapters/00-overview.md"), "").unwrap();
        let before = |p: &Path| std::fs::read_to_string(p).unwrap();
        let (declared, checks) = (before(&declaration), before(&module));
        let refused = new_exercise(&root, &toy()).unwrap_err().to_string();
        assert!(refused.ends_with("is a symbolic link: name a new file or a regular file to replace"), "{refused}");
        assert_eq!((before(&declaration), before(&module)), (declared, checks));
        assert!(toy().files(&root).iter().all(|(p, _)| !p.exists()), "a new file is left");
    }

    #[test]
    fn the_table_is_replaced_where_its_header_is_and_nowhere_else() {
        let text = "intro\n| # | a |\n| --- | --- |\n| 1 | x |\n\nafter\n| # | a |\n";
        let new = replace_table(text, "| # | a |\n| --- | --- |\n| 1 | x |\n| 2 | y |\n").unwrap();
        assert_eq!(new, "intro\n| # | a |\n| --- | --- |\n| 1 | x |\n| 2 | y |\n\nafter\n| # | a |\n");
        assert_eq!(replace_table("no table\n", "| # | a |\n"), None);
    }
}
