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
pub mod kept_back;
pub mod scaffold;
pub mod wire;
mod write;

pub use write::{target_may_be_replaced, write_whole, Partial};

/// How many wrong answers an exercise needs in `tests/exercise-mistakes/NAME/`, each named after a mistake
/// its check names (or saying `//! mistake: unnamed`): the one rule that `crates/checks/tests/declared.rs`
/// holds every exercise to, and that `anatomy exercises new` scaffolds.
pub const WRONG_ANSWERS_NEEDED: usize = 2;

#[path = "../../../src/project.rs"]
mod project;

/// The project's root: the folder that holds `grader/`, found when the program runs (the learner's
/// crate's `src/project.rs`, included here: this crate does not depend on that one).
pub use project::{program_root, project_root};

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
    /// What it is worth, unless the course file says otherwise (`anatomy_grade::points`).
    pub points: f64,
}

/// Every exercise of the course, declared once, in the order to do them: the chapter's steps, the
/// decoder, training and decoding, the decoder-only block of chapter 11, then chapter 12's pooling.
///
/// Each entry names the exercise (its student file `exercises/NAME.rs`, its stub `stubs/NAME.rs`, its hints
/// `exercises/hints/NAME.md`, its solution `solutions/NAME.rs`, its wrong answers
/// `tests/exercise-mistakes/NAME/`), its chapter, whether it is the chapter's homework, its default points,
/// the functions the student writes with their arguments, a one-line summary, what it may import from the
/// learner's crate, the finished operations it forbids ([`forbidden`]), and its check: the module of
/// `anatomy_checks::checks` that holds the function `NAME` and the list of the mistakes it names. The
/// exercise list ([`EXERCISES`]), the checks' registry (`anatomy_checks::checks::CHECKS`), the default
/// points (`anatomy_grade::points`) and the tables of the docs ([`markdown_table`]) are all read from
/// here; `crates/checks/tests/declared.rs` holds every file to it. Give it a macro that takes the entries,
/// and it calls that macro with them.
#[macro_export]
macro_rules! for_each_exercise {
    ($then:ident) => {
        $then! {
            scaled_dot_product {
                chapter: "02-self-attention", homework: false, points: 5,
                functions: [scaled_dot_product(query, key, value)],
                summary: "scores q·kᵀ, scaled by √d, softmax over the keys, weighted sum of the values",
                uses: [], forbids: [ATTENTION], check: attention::SCALED_DOT_PRODUCT,
            },
            attention_head {
                chapter: "03-multi-head-attention", homework: false, points: 5,
                functions: [attention_head(hidden_state, projections)],
                summary: "one attention head: three linear maps, then scaled dot-product attention",
                uses: ["exercises::support::Projections"], forbids: [ATTENTION],
                check: attention::ATTENTION_HEAD,
            },
            split_heads {
                chapter: "03-multi-head-attention", homework: false, points: 5,
                functions: [split_heads(x, num_heads), merge_heads(x)],
                summary: "cut the hidden axis into heads and put it back (view and transpose)",
                uses: [], forbids: [], check: attention::SPLIT_HEADS,
            },
            feed_forward {
                chapter: "04-feed-forward", homework: false, points: 5,
                functions: [feed_forward(x, linear_1, linear_2)],
                summary: "the position-wise feed-forward layer: linear, GELU, linear",
                uses: [], forbids: [], check: encoder::FEED_FORWARD,
            },
            layer_norm {
                chapter: "05-layer-norm-and-encoder-layer", homework: false, points: 5,
                functions: [layer_norm(x, weight, bias, eps)],
                summary: "layer normalization by hand: mean, biased variance, ε, scale and shift",
                uses: [], forbids: [NORMS], check: encoder::LAYER_NORM,
            },
            embeddings {
                chapter: "06-positional-embeddings", homework: false, points: 5,
                functions: [embeddings(input_ids, token_embeddings, position_embeddings, layer_norm)],
                summary: "token plus learned position embeddings, then one layer norm",
                uses: [], forbids: [], check: encoder::EMBEDDINGS,
            },
            classifier_head {
                chapter: "07-encoder-and-classifier", homework: false, points: 5,
                functions: [classifier_head(hidden_states, classifier)],
                summary: "class logits from the hidden state of the first ([CLS]) token",
                uses: [], forbids: [], check: encoder::CLASSIFIER_HEAD,
            },
            causal_mask {
                chapter: "08-decoder-and-masking", homework: false, points: 5,
                functions: [causal_mask(n, device), masked_softmax(scores, mask)],
                summary: "build the lower-triangular mask and hide the future from the softmax",
                uses: [], forbids: [ATTENTION], check: decoder::CAUSAL_MASK,
            },
            cross_attention {
                chapter: "08-decoder-and-masking", homework: true, points: 20,
                functions: [cross_attention(decoder_states, encoder_output, projections, source_mask)],
                summary: "encoder-decoder attention: queries from the decoder, keys and values from the encoder",
                uses: ["exercises::support::Projections"], forbids: [ATTENTION],
                check: decoder::CROSS_ATTENTION,
            },
            decoder_layer {
                chapter: "08-decoder-and-masking", homework: false, points: 5,
                functions: [decoder_layer(x, memory, parts, target_mask, source_mask)],
                summary: "masked self-attention, cross-attention and feed-forward, pre-layer-norm",
                uses: ["exercises::support::DecoderLayerParts", "Attention", "Pass"], forbids: [ATTENTION],
                check: decoder::DECODER_LAYER,
            },
            sinusoidal_positions {
                chapter: "06-positional-embeddings", homework: false, points: 5,
                functions: [sinusoidal_positions(max_len, d_model, device)],
                summary: "the fixed sine/cosine positional encoding of the 2017 paper",
                uses: [], forbids: [], check: decoder::SINUSOIDAL_POSITIONS,
            },
            shift_right {
                chapter: "10-training", homework: false, points: 5,
                functions: [shift_right(targets, bos, pad)],
                summary: "teacher forcing: the decoder's input is the target shifted right behind a start token",
                uses: [], forbids: [], check: training::SHIFT_RIGHT,
            },
            label_smoothed_loss {
                chapter: "10-training", homework: false, points: 5,
                functions: [label_smoothed_loss(logits, targets, smoothing, pad)],
                summary: "cross-entropy against smoothed targets, padding left out",
                uses: [], forbids: [CROSS_ENTROPY], check: training::LABEL_SMOOTHED_LOSS,
            },
            warmup_schedule {
                chapter: "10-training", homework: false, points: 5,
                functions: [learning_rate(step, d_model, warmup)],
                summary: "the paper's learning rate: linear warm-up, then 1/√step",
                uses: [], forbids: [], check: training::WARMUP_SCHEDULE,
            },
            beam_step {
                chapter: "10-training", homework: false, points: 5,
                functions: [beam_step(scores, log_probs, width)],
                summary: "one step of beam search: extend every beam, keep the best over all of them",
                uses: [], forbids: [], check: training::BEAM_STEP,
            },
            cached_attention {
                chapter: "10-training", homework: false, points: 5,
                functions: [cached_attention(past_keys, past_values, query, key, value)],
                summary: "one decoding step with a key/value cache: append, then attend",
                uses: [], forbids: [ATTENTION], check: training::CACHED_ATTENTION,
            },
            gpt_block {
                chapter: "11-gpt", homework: false, points: 5,
                functions: [gpt_block(x, parts)],
                summary: "one decoder-only block with its attention written out: heads, causal mask, softmax, feed-forward",
                uses: ["exercises::support::GptBlockParts"], forbids: [ATTENTION], check: gpt::GPT_BLOCK,
            },
            mean_pooling {
                chapter: "12-spam-filter", homework: false, points: 5,
                functions: [mean_pooling(hidden_states, attention_mask)],
                summary: "one vector per text for chapter 12's head: the mean over the real tokens, padding left out",
                uses: [], forbids: [], check: encoder::MEAN_POOLING,
            },
            // `anatomy exercises new` declares the next exercise above this line.
        }
    };
}

/// One for each argument: how many arguments a declared function takes.
#[doc(hidden)]
#[macro_export]
macro_rules! one_for {
    ($x:ident) => {
        1
    };
}

/// The exercise list, from the declaration.
macro_rules! exercise_list {
    ($($name:ident {
        chapter: $chapter:literal, homework: $homework:literal, points: $points:literal,
        functions: [$($function:ident($($arg:ident),*)),+],
        summary: $summary:literal,
        uses: [$($use:literal),*], forbids: [$($forbid:ident),*], check: $module:ident :: $mistakes:ident $(,)?
    }),* $(,)?) => {
        /// Every exercise, in the order to do them ([`for_each_exercise`] declares them).
        pub const EXERCISES: &[Exercise] = &[$(
            Exercise {
                name: stringify!($name),
                summary: $summary,
                chapter: $chapter,
                homework: $homework,
                points: $points as f64,
                functions: &[$((stringify!($function), 0 $(+ one_for!($arg))*)),+],
                stub: include_str!(concat!("stubs/", stringify!($name), ".rs")),
                hints: include_str!(concat!("../../../exercises/hints/", stringify!($name), ".md")),
                uses: &[$($use),*],
                forbids: &[$(&forbidden::$forbid),*],
            }
        ),*];
    };
}

for_each_exercise!(exercise_list);

/// The folder of the student's files: `exercises/`, or the folder named by `ANATOMY_EXERCISES_DIR` (a
/// second set of files, say, or a test's scratch folder). Progress is kept there too.
pub fn exercises_dir() -> PathBuf {
    match std::env::var_os("ANATOMY_EXERCISES_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => project_root().join("exercises"),
    }
}

/// The instructors' table of the exercises (number, exercise, chapter, task, points), as exercises/README.md
/// shows it.
pub fn markdown_table() -> String {
    let mut text = String::from("| # | exercise | chapter | the task | points |\n| --- | --- | --- | --- | --- |\n");
    for e in EXERCISES {
        let task =
            if e.homework { format!("**the chapter's homework**: {}", e.summary) } else { e.summary.to_string() };
        text += &format!("| {} | `{}` | `{}` | {task} | {} |\n", e.number(), e.name, e.chapter, e.points);
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
    /// What the code printed during its check, as a learner reads it under the verdict (escaped and cut by
    /// `anatomy_intake::printed`): kept when a learner grades their own files, never for a class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

#[cfg(test)]
mod tests;
