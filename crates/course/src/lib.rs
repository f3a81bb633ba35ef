//! # The course's exercises, as data
//!
//! [`EXERCISES`] is the one list of exercises: `anatomy exercises list`, `check`, `watch`, `reset`,
//! `solution` and `grade` (a class), the table in `exercises/README.md`, the checks (`anatomy-checks`) and
//! the grader (`anatomy-grade`) all read it. An exercise is named once; its student file is
//! `exercises/NAME.rs`, its hints `exercises/hints/NAME.md`, its reference solution `solutions/NAME.rs`,
//! its untouched stub `crates/course/src/stubs/NAME.rs` (compiled in here, so that a student can always
//! get one back), and its check `anatomy_checks::checks::NAME`, which takes the student's functions (listed
//! in `functions`) in order. What an outcome is ([`Status`], [`Outcome`]) is declared here too.
//!
//! This crate is the bottom of the exercises' crates: it has no LibTorch and no grader, so that the
//! grader's intake (`anatomy-intake`, fuzzed on its own), the checks a student's program and the homework
//! notebook run (`anatomy-checks`) and the grader itself share one list without sharing anything else.
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub mod forbidden;
pub mod wire;

/// The project's root: the folder that holds `grader/` (found once, by this crate's build script).
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("ANATOMY_PROJECT_ROOT"))
}

/// One exercise of the course.
#[derive(Debug)]
pub struct Exercise {
    pub name: &'static str,
    /// What it asks, in a line.
    pub summary: &'static str,
    /// The chapter notebook (`chapters/NN-….md`) that explains the step.
    pub chapter: &'static str,
    /// The chapter's own homework (encoder-decoder attention).
    pub homework: bool,
    /// The functions the student writes, in the order `checks::NAME` takes them, with their number of
    /// arguments.
    pub functions: &'static [(&'static str, usize)],
    /// The untouched student file.
    pub stub: &'static str,
    /// The hints, one numbered item per level.
    pub hints: &'static str,
    /// What the file may import from the learner's crate (paths below `transformer_anatomy::`): what its
    /// stub imports. Everything else of that crate is refused before compiling (the grader's rules,
    /// `anatomy_intake::rules`).
    pub uses: &'static [&'static str],
    /// The finished operations the exercise asks the student to write instead of call.
    pub forbids: &'static [&'static forbidden::Forbidden],
}

macro_rules! exercise {
    ($name:literal, $chapter:literal, $homework:literal, [$($f:literal / $n:literal),+], $summary:literal) => {
        exercise!($name, $chapter, $homework, [$($f / $n),+], $summary, uses [], forbids [])
    };
    ($name:literal, $chapter:literal, $homework:literal, [$($f:literal / $n:literal),+], $summary:literal,
     uses [$($u:literal),*], forbids [$($x:expr),*]) => {
        Exercise {
            name: $name,
            summary: $summary,
            chapter: $chapter,
            homework: $homework,
            functions: &[$(($f, $n)),+],
            stub: include_str!(concat!("stubs/", $name, ".rs")),
            hints: include_str!(concat!("../../../exercises/hints/", $name, ".md")),
            uses: &[$($u),*],
            forbids: &[$(&$x),*],
        }
    };
}

/// Every exercise, in the order to do them: the chapter's steps, the decoder, training and decoding, the
/// decoder-only block of chapter 11, then chapter 12's pooling.
pub const EXERCISES: &[Exercise] = &[
    exercise!(
        "scaled_dot_product",
        "02-self-attention",
        false,
        ["scaled_dot_product" / 3],
        "scores q·kᵀ, scaled by √d, softmax over the keys, weighted sum of the values",
        uses [], forbids [forbidden::ATTENTION]
    ),
    exercise!(
        "attention_head",
        "02-self-attention",
        false,
        ["attention_head" / 2],
        "one attention head: three linear maps, then scaled dot-product attention",
        uses["exercises::support::Projections"],
        forbids[forbidden::ATTENTION]
    ),
    exercise!(
        "split_heads",
        "03-multi-head-attention",
        false,
        ["split_heads" / 2, "merge_heads" / 1],
        "cut the hidden axis into heads and put it back (view and transpose)"
    ),
    exercise!(
        "feed_forward",
        "04-feed-forward",
        false,
        ["feed_forward" / 3],
        "the position-wise feed-forward layer: linear, GELU, linear"
    ),
    exercise!(
        "layer_norm",
        "05-layer-norm-and-encoder-layer",
        false,
        ["layer_norm" / 4],
        "layer normalization by hand: mean, biased variance, ε, scale and shift",
        uses [], forbids [forbidden::NORMS]
    ),
    exercise!(
        "embeddings",
        "06-positional-embeddings",
        false,
        ["embeddings" / 4],
        "token plus learned position embeddings, then one layer norm"
    ),
    exercise!(
        "classifier_head",
        "07-encoder-and-classifier",
        false,
        ["classifier_head" / 2],
        "class logits from the hidden state of the first ([CLS]) token"
    ),
    exercise!(
        "causal_mask",
        "08-decoder-and-masking",
        false,
        ["causal_mask" / 2, "masked_softmax" / 2],
        "build the lower-triangular mask and hide the future from the softmax",
        uses [], forbids [forbidden::ATTENTION]
    ),
    exercise!(
        "cross_attention",
        "08-decoder-and-masking",
        true,
        ["cross_attention" / 4],
        "encoder-decoder attention: queries from the decoder, keys and values from the encoder",
        uses["exercises::support::Projections"],
        forbids[forbidden::ATTENTION]
    ),
    exercise!(
        "decoder_layer",
        "08-decoder-and-masking",
        false,
        ["decoder_layer" / 5],
        "masked self-attention, cross-attention and feed-forward, pre-layer-norm",
        uses ["exercises::support::DecoderLayerParts", "Attention", "Pass"], forbids [forbidden::ATTENTION]
    ),
    exercise!(
        "sinusoidal_positions",
        "06-positional-embeddings",
        false,
        ["sinusoidal_positions" / 3],
        "the fixed sine/cosine positional encoding of the 2017 paper"
    ),
    exercise!(
        "shift_right",
        "10-training",
        false,
        ["shift_right" / 3],
        "teacher forcing: the decoder's input is the target shifted right behind a start token"
    ),
    exercise!(
        "label_smoothed_loss",
        "10-training",
        false,
        ["label_smoothed_loss" / 4],
        "cross-entropy against smoothed targets, padding left out",
        uses [], forbids [forbidden::CROSS_ENTROPY]
    ),
    exercise!(
        "warmup_schedule",
        "10-training",
        false,
        ["learning_rate" / 3],
        "the paper's learning rate: linear warm-up, then 1/√step"
    ),
    exercise!(
        "beam_step",
        "10-training",
        false,
        ["beam_step" / 3],
        "one step of beam search: extend every beam, keep the best over all of them"
    ),
    exercise!(
        "cached_attention",
        "10-training",
        false,
        ["cached_attention" / 5],
        "one decoding step with a key/value cache: append, then attend",
        uses [], forbids [forbidden::ATTENTION]
    ),
    exercise!(
        "gpt_block",
        "11-gpt",
        false,
        ["gpt_block" / 2],
        "one decoder-only block with its attention written out: heads, causal mask, softmax, feed-forward",
        uses["exercises::support::GptBlockParts"],
        forbids[forbidden::ATTENTION]
    ),
    exercise!(
        "mean_pooling",
        "12-spam-filter",
        false,
        ["mean_pooling" / 2],
        "one vector per text for chapter 12's head: the mean over the real tokens, padding left out"
    ),
];

/// The folder of the student's files: `exercises/`, or the folder named by `ANATOMY_EXERCISES_DIR` (a
/// second set of files, say, or a test's scratch folder). Progress is kept there too.
pub fn exercises_dir() -> PathBuf {
    match std::env::var_os("ANATOMY_EXERCISES_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => project_root().join("exercises"),
    }
}

/// The instructors' table of the exercises (number, exercise, chapter, task), as exercises/README.md shows it.
pub fn markdown_table() -> String {
    let mut text = String::from("| # | exercise | chapter | the task |\n| --- | --- | --- | --- |\n");
    for e in EXERCISES {
        let task =
            if e.homework { format!("**the chapter's homework**: {}", e.summary) } else { e.summary.to_string() };
        text += &format!("| {} | `{}` | `{}` | {task} |\n", e.number(), e.name, e.chapter);
    }
    text
}

/// The exercise of that name, or an error that lists the names.
pub fn find(name: &str) -> anyhow::Result<&'static Exercise> {
    EXERCISES.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = EXERCISES.iter().map(|e| e.name).collect();
        anyhow::anyhow!("no exercise named {name:?}: choose one of {}", names.join(", "))
    })
}

impl Exercise {
    /// The student's file.
    pub fn file(&self) -> PathBuf {
        exercises_dir().join(format!("{}.rs", self.name))
    }

    /// The hint file.
    pub fn hint_file(&self) -> PathBuf {
        project_root().join("exercises").join("hints").join(format!("{}.md", self.name))
    }

    /// The reference solution (present in instructors' copies only).
    pub fn solution_file(&self) -> PathBuf {
        project_root().join("solutions").join(format!("{}.rs", self.name))
    }

    /// Its position in the course, from 1.
    pub fn number(&self) -> usize {
        EXERCISES.iter().position(|e| e.name == self.name).expect("registered") + 1
    }

    /// The hints, one per level, in increasing detail (the numbered items of the hint file).
    pub fn hint_levels(&self) -> Vec<String> {
        let mut levels: Vec<String> = Vec::new();
        for line in self.hints.lines() {
            let starts_item =
                line.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if starts_item {
                levels.push(line.split_once(". ").expect("checked").1.to_string());
            } else if let Some(last) = levels.last_mut() {
                if !line.trim().is_empty() {
                    last.push(' ');
                    last.push_str(line.trim());
                }
            }
        }
        levels
    }
}

/// Where an exercise stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Passed,
    /// The body still calls `todo!()` (or `unimplemented!()`).
    NotDone,
    Failed,
    /// The file does not compile (the message is the compiler's first error in it).
    DoesNotCompile,
}

impl Status {
    /// Every status, in the order a report stacks them.
    pub const ALL: [Status; 4] = [Status::Passed, Status::Failed, Status::DoesNotCompile, Status::NotDone];

    /// How a table or list shows it.
    pub fn words(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::NotDone => "not done",
            Status::Failed => "failed",
            Status::DoesNotCompile => "does not compile",
        }
    }
}

/// The result of grading one file, with a message for the student.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The exercise.
    pub name: &'static str,
    /// What was graded ("causal_mask", or "ada/causal_mask" in a class).
    pub label: String,
    pub status: Status,
    pub message: String,
    /// For a check of independent parts: how many passed, and how many there are (partial credit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parts: Option<(usize, usize)>,
    /// What went wrong, as an id a class's report can count (`anatomy_checks::mistakes`): set for every outcome that
    /// failed or does not compile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mistake: Option<String>,
}
