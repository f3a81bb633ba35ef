//! # Data that needs no download: three generated tasks
//!
//! A translation model learns from pairs of sentences. To watch one learn on a laptop, the pairs here are
//! generated in code: `copy` (repeat ten digits), `reverse` (write them backwards) — the annotated
//! Transformer's toy tasks — and `dates`, a small translation-like task with real reordering and variable
//! length: a date written in words ("the twenty-second of november 2026", "november 22 , 2026") becomes
//! its ISO form ("2026-11-22"), so the day has to travel from the front of the source to the end of the
//! target, and encoder-decoder attention has something to align. The held-out examples come from their
//! own seed and are never drawn for training.
//!
//! Chapter section: [`chapters/10-training.md`](../chapters/10-training.md).
use std::collections::{HashMap, HashSet};

use anyhow::{bail, Result};
use tch::{Device, Tensor};

/// The id that fills up short sequences (masked out of attention and of the loss).
pub const PAD: i64 = 0;
/// The start token the decoder begins from.
pub const BOS: i64 = 1;
/// The end token that closes every target.
pub const EOS: i64 = 2;
/// Stands for a token outside the vocabulary (never produced by the tasks).
pub const UNK: i64 = 3;

const SPECIALS: [&str; 4] = ["<pad>", "<s>", "</s>", "<unk>"];
const DIGITS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const ORDINALS: [&str; 31] = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
    "twenty-first",
    "twenty-second",
    "twenty-third",
    "twenty-fourth",
    "twenty-fifth",
    "twenty-sixth",
    "twenty-seventh",
    "twenty-eighth",
    "twenty-ninth",
    "thirtieth",
    "thirty-first",
];

/// Token strings and their ids; ids 0–3 are `<pad>`, `<s>`, `</s>` and `<unk>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Vocab {
    tokens: Vec<String>,
    index: HashMap<String, i64>,
}

impl Vocab {
    /// The special tokens followed by `words`.
    pub fn new<'a>(words: impl IntoIterator<Item = &'a str>) -> Self {
        let tokens: Vec<String> = SPECIALS.iter().copied().chain(words).map(String::from).collect();
        let index = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as i64)).collect();
        Vocab { tokens, index }
    }

    pub fn len(&self) -> i64 {
        self.tokens.len() as i64
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    pub fn id(&self, token: &str) -> Option<i64> {
        self.index.get(token).copied()
    }

    /// The token of an id (`<unk>` for an id outside the table).
    pub fn token(&self, id: i64) -> &str {
        self.tokens.get(id as usize).map_or(SPECIALS[UNK as usize], String::as_str)
    }

    /// Ids for tokens; a token outside the vocabulary is an error that names it.
    pub fn encode(&self, tokens: &[String], task: Task) -> Result<Vec<i64>> {
        tokens
            .iter()
            .map(|t| match self.id(t) {
                Some(id) if id > UNK => Ok(id),
                _ => bail!("{t:?} is not in the {} task's vocabulary: {}", task.name(), task.describe_input()),
            })
            .collect()
    }

    /// Tokens for ids, stopping at `</s>` and leaving out `<s>` and padding.
    pub fn decode(&self, ids: &[i64]) -> Vec<String> {
        ids.iter()
            .take_while(|&&id| id != EOS)
            .filter(|&&id| id != BOS && id != PAD)
            .map(|&id| self.token(id).to_string())
            .collect()
    }
}

/// One of the generated tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// Ten random digits, repeated.
    Copy,
    /// Ten random digits, written backwards.
    Reverse,
    /// A date in words (three phrasings) to its ISO form, `yyyy-mm-dd`.
    Dates,
}

/// A source sentence and its target, as tokens.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SentencePair {
    pub source: Vec<String>,
    pub target: Vec<String>,
}

impl Task {
    /// Every task, in the order the command line lists them.
    pub const ALL: [Task; 3] = [Task::Copy, Task::Reverse, Task::Dates];

    pub fn name(self) -> &'static str {
        match self {
            Task::Copy => "copy",
            Task::Reverse => "reverse",
            Task::Dates => "dates",
        }
    }

    /// The task of a name, or an error that lists the tasks.
    pub fn from_name(name: &str) -> Result<Self> {
        match Task::ALL.into_iter().find(|t| t.name() == name) {
            Some(task) => Ok(task),
            None => {
                let names: Vec<&str> = Task::ALL.iter().map(|t| t.name()).collect();
                bail!("unknown task {name:?}: choose one of {}", names.join(", "))
            }
        }
    }

    /// One line on what the task asks, for `--help`.
    pub fn summary(self) -> &'static str {
        match self {
            Task::Copy => "Repeat ten digits.",
            Task::Reverse => "Write ten digits backwards.",
            Task::Dates => "A date in words to its ISO form (\"the twenty-second of november 2026\" → 2026-11-22).",
        }
    }

    /// What an input of this task looks like, for error messages and `--help`.
    pub fn describe_input(self) -> &'static str {
        match self {
            Task::Copy | Task::Reverse => "give digits, e.g. \"3 1 4 1 5 9 2 6 5 3\"",
            Task::Dates => {
                "give a date in words, e.g. \"the twenty-second of november 2026\", \"november 22 , 2026\" or \
                 \"22 november 2026\""
            }
        }
    }

    /// The task's vocabulary, shared by source and target.
    pub fn vocab(self) -> Vocab {
        match self {
            Task::Copy | Task::Reverse => Vocab::new(DIGITS),
            Task::Dates => Vocab::new(DIGITS.into_iter().chain(["-", ",", "the", "of"]).chain(MONTHS).chain(ORDINALS)),
        }
    }

    /// Splits a text into the task's tokens: words, commas and hyphens between digits stand alone, and
    /// every digit is a token of its own ("2026" → 2 0 2 6). Letters are lower-cased.
    pub fn tokenize(self, text: &str) -> Vec<String> {
        let mut tokens = Vec::new();
        let mut word = String::new();
        let flush = |word: &mut String, tokens: &mut Vec<String>| {
            if !word.is_empty() {
                tokens.push(std::mem::take(word));
            }
        };
        for c in text.chars().flat_map(char::to_lowercase) {
            if c.is_ascii_digit() || c == ',' || (c == '-' && word.is_empty()) {
                flush(&mut word, &mut tokens);
                tokens.push(c.to_string());
            } else if c.is_whitespace() {
                flush(&mut word, &mut tokens);
            } else {
                word.push(c);
            }
        }
        flush(&mut word, &mut tokens);
        tokens
    }

    /// Joins output tokens the way the task writes them: digits with spaces, dates without.
    pub fn detokenize(self, tokens: &[String]) -> String {
        match self {
            Task::Copy | Task::Reverse => tokens.join(" "),
            Task::Dates => tokens.concat(),
        }
    }

    /// The longest source and target (without `<s>`/`</s>`) the task produces.
    pub fn max_lengths(self) -> (i64, i64) {
        match self {
            Task::Copy | Task::Reverse => (10, 10),
            Task::Dates => (9, 10), // "the twenty-second of november 2 0 2 6"; "2026-11-22"
        }
    }

    /// Draws one example.
    pub fn sample(self, rng: &mut Rng) -> SentencePair {
        match self {
            Task::Copy | Task::Reverse => {
                let source: Vec<String> = (0..10).map(|_| DIGITS[rng.below(10)].to_string()).collect();
                let mut target = source.clone();
                if self == Task::Reverse {
                    target.reverse();
                }
                SentencePair { source, target }
            }
            Task::Dates => {
                let year = 1900 + rng.below(200) as u32;
                let month = rng.below(12) as u32 + 1;
                let day = rng.below(days_in_month(year, month) as usize) as u32 + 1;
                let (m, d) = (MONTHS[month as usize - 1], ORDINALS[day as usize - 1]);
                let source = match rng.below(3) {
                    0 => format!("the {d} of {m} {year}"),
                    1 => format!("{m} {day} , {year}"),
                    _ => format!("{day} {m} {year}"),
                };
                let target = format!("{year:04}-{month:02}-{day:02}");
                SentencePair { source: self.tokenize(&source), target: self.tokenize(&target) }
            }
        }
    }

    /// `n` held-out examples drawn from their own seed, all different.
    pub fn held_out(self, n: usize, seed: u64) -> Vec<SentencePair> {
        let mut rng = Rng::new(seed ^ 0x4845_4c44_4f55_5421); // a different stream from training's
        let mut seen = HashSet::new();
        let mut examples = Vec::with_capacity(n);
        while examples.len() < n {
            let example = self.sample(&mut rng);
            if seen.insert(example.source.clone()) {
                examples.push(example);
            }
        }
        examples
    }
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A small random number generator (SplitMix64): the data does not depend on LibTorch's generator, so a
/// seed gives the same examples on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Training examples from a seed, endlessly, never one whose source is in the held-out set.
#[derive(Debug)]
pub struct TrainStream {
    task: Task,
    rng: Rng,
    excluded: HashSet<Vec<String>>,
}

impl TrainStream {
    pub fn new(task: Task, seed: u64, held_out: &[SentencePair]) -> Self {
        TrainStream { task, rng: Rng::new(seed), excluded: held_out.iter().map(|e| e.source.clone()).collect() }
    }

    pub fn next_examples(&mut self, n: usize) -> Vec<SentencePair> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let example = self.task.sample(&mut self.rng);
            if !self.excluded.contains(&example.source) {
                out.push(example);
            }
        }
        out
    }
}

/// A batch of pairs as padded id tensors: `source` `[b, s]`, the decoder's input `target_in`
/// (`<s>` + target) and what it should predict, `target_out` (target + `</s>`), both `[b, t]`.
#[derive(Debug)]
pub struct Batch {
    pub source: Tensor,
    pub target_in: Tensor,
    pub target_out: Tensor,
    /// Non-padding target positions: what the loss averages over.
    pub tokens: i64,
}

impl Batch {
    /// Encodes and pads the examples (the right side is filled with `<pad>`).
    pub fn new(examples: &[SentencePair], vocab: &Vocab, task: Task, device: Device) -> Result<Self> {
        let mut sources = Vec::with_capacity(examples.len());
        let mut targets = Vec::with_capacity(examples.len());
        for e in examples {
            sources.push(vocab.encode(&e.source, task)?);
            targets.push(vocab.encode(&e.target, task)?);
        }
        let target_in: Vec<Vec<i64>> = targets.iter().map(|t| [&[BOS][..], t].concat()).collect();
        let target_out: Vec<Vec<i64>> = targets.iter().map(|t| [&t[..], &[EOS]].concat()).collect();
        let tokens = target_out.iter().map(|t| t.len() as i64).sum();
        Ok(Batch {
            source: padded(&sources, device),
            target_in: padded(&target_in, device),
            target_out: padded(&target_out, device),
            tokens,
        })
    }
}

/// Rows of ids → `[rows, longest]`, filled with `PAD`.
pub fn padded(rows: &[Vec<i64>], device: Device) -> Tensor {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    let flat: Vec<i64> =
        rows.iter().flat_map(|r| r.iter().copied().chain(std::iter::repeat_n(PAD, width - r.len()))).collect();
    Tensor::from_slice(&flat).view([rows.len() as i64, width as i64]).to_device(device)
}
