//! The new exercise's table in the declaration (`crates/course/exercises.toml`), written in the layout of
//! the others and put where the course does it: below the table of the exercise it comes after, or last.
//! The file is edited as text, so that its comments and layout stay as a person left them; the build
//! scripts then read it whole (`crates/course/declaration.rs`).
use super::NewExercise;

/// The line that starts each exercise's table.
const TABLE: &str = "[[exercise]]";

/// A TOML basic string: quoted, with `\` and `"` escaped, and every control character as `\uXXXX`.
fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '\\' | '"' => out.extend(['\\', c]),
            c if c.is_control() => out += &format!("\\u{:04X}", c as u32),
            c => out.push(c),
        }
    }
    out + "\""
}

/// `key = [a, b]`, or one wrapped line of items after another where that is wider than the others' 110.
fn array(key: &str, items: &[String]) -> String {
    let line = format!("{key} = [{}]\n", items.join(", "));
    if line.len() <= 111 {
        return line;
    }
    let mut lines = vec![format!("{key} = [")];
    for item in items {
        match lines.last_mut() {
            Some(last) if last.starts_with("    ") && last.len() + item.len() + 2 <= 110 => {
                *last += &format!(" {item},")
            }
            _ => lines.push(format!("    {item},")),
        }
    }
    lines.join("\n") + "\n]\n"
}

impl NewExercise {
    /// The exercise's table, as the declaration's other tables are laid out.
    pub(super) fn table(&self) -> String {
        let strings = |items: &[String]| -> Vec<String> { items.iter().map(|i| quoted(i)).collect() };
        format!(
            "{TABLE}\nname = {name}\nchapter = {chapter}\nhomework = false\npoints = {points}\n\
             functions = [{function}]\nsummary = {summary}\nuses = []\n{forbids}check = {module}\n{mistakes}",
            name = quoted(&self.name),
            chapter = quoted(&self.chapter),
            points = self.points,
            function = quoted(&format!("{}({})", self.name, self.args.join(", "))),
            summary = quoted(self.summary.trim()),
            forbids = array("forbids", &strings(&self.forbids)),
            module = quoted(&self.module),
            mistakes = array("mistakes", &strings(&self.mistakes)),
        )
    }
}

/// The names of the tables of `text`, in order, each with where its table starts: its `[[exercise]]` line,
/// or the comment lines right above it, which go with it.
pub(super) fn tables(text: &str) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    let (mut offset, mut comment_from) = (0, None);
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        let here = offset;
        offset += line.len();
        if line.trim_end() == TABLE {
            // Its own `name` only: never the next table's.
            let name = lines
                .clone()
                .take_while(|l| l.trim_end() != TABLE)
                .find_map(|l| l.trim().strip_prefix("name = \"")?.split('"').next());
            found.push((name.unwrap_or_default().to_string(), comment_from.unwrap_or(here)));
        }
        comment_from = match (line.starts_with('#'), comment_from) {
            (true, None) => Some(here),
            (true, from) => from,
            (false, _) => None,
        };
    }
    found
}

/// `text` with the new exercise's table below the table of the exercise it comes after, or last.
pub(super) fn insert(text: &str, new: &NewExercise) -> String {
    let tables = tables(text);
    let after = new.after.as_ref().and_then(|after| tables.iter().position(|(name, _)| name == after));
    match after.and_then(|i| tables.get(i + 1)) {
        Some((_, at)) => format!("{}{}\n{}", &text[..*at], new.table(), &text[*at..]),
        None if text.is_empty() || text.ends_with("\n\n") => format!("{text}{}", new.table()),
        None if text.ends_with('\n') => format!("{text}\n{}", new.table()),
        None => format!("{text}\n\n{}", new.table()),
    }
}
