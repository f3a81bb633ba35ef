//! # Exercises, rustlings-style, with a grader
//!
//! The student files live in `exercises/` at the top of the project, one per exercise, with `todo!()`
//! bodies; hints in `exercises/hints/`; reference solutions in `solutions/`, which instructors keep back
//! (the crate builds without that folder: `build.rs` notices whether it is there). The checks in
//! [`checks`] grade either one, and `anatomy exercises check` runs them, reporting a `todo!()` as "not
//! done" and any other panic as a failure, never as a crash. See `exercises/README.md`.
use std::panic::{self, AssertUnwindSafe};

use serde::Serialize;

pub mod checks;
pub mod support;

#[path = "../../exercises/causal_mask.rs"]
pub mod causal_mask;
#[path = "../../exercises/cross_attention.rs"]
pub mod cross_attention;
#[path = "../../exercises/decoder_layer.rs"]
pub mod decoder_layer;
#[path = "../../exercises/sinusoidal_positions.rs"]
pub mod sinusoidal_positions;

// The reference solutions, compiled only where `solutions/` exists.
#[cfg(anatomy_solutions)]
#[path = "../../solutions/causal_mask.rs"]
#[doc(hidden)]
pub mod solution_causal_mask;
#[cfg(anatomy_solutions)]
#[path = "../../solutions/cross_attention.rs"]
#[doc(hidden)]
pub mod solution_cross_attention;
#[cfg(anatomy_solutions)]
#[path = "../../solutions/decoder_layer.rs"]
#[doc(hidden)]
pub mod solution_decoder_layer;
#[cfg(anatomy_solutions)]
#[path = "../../solutions/sinusoidal_positions.rs"]
#[doc(hidden)]
pub mod solution_sinusoidal_positions;

/// The reference solutions, under the same names as the exercises (only where `solutions/` exists).
#[cfg(anatomy_solutions)]
pub mod solutions {
    pub use super::solution_causal_mask as causal_mask;
    pub use super::solution_cross_attention as cross_attention;
    pub use super::solution_decoder_layer as decoder_layer;
    pub use super::solution_sinusoidal_positions as sinusoidal_positions;
}

/// Whether this copy of the crate was built with the reference solutions.
pub const SOLUTIONS_AVAILABLE: bool = cfg!(anatomy_solutions);

type Check = fn() -> checks::CheckResult;

/// One exercise: its name, what it asks, and the check run against the student's file and the solution.
pub struct Exercise {
    pub name: &'static str,
    pub summary: &'static str,
    student: Check,
    #[allow(dead_code)] // unused where solutions/ is absent
    solution: Option<Check>,
}

/// Where an exercise stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Passed,
    /// The body still calls `todo!()` (or `unimplemented!()`).
    NotDone,
    Failed,
}

/// The result of one check, with a message for the student.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub name: &'static str,
    pub status: Status,
    pub message: String,
}

macro_rules! implementations {
    ($module:path) => {{
        use $module as m;
        (
            || {
                checks::check_causal_mask(&checks::CausalMaskImpl {
                    causal_mask: m::causal_mask::causal_mask,
                    masked_softmax: m::causal_mask::masked_softmax,
                }) as checks::CheckResult
            },
            || {
                checks::check_cross_attention(&checks::CrossAttentionImpl {
                    cross_attention: m::cross_attention::cross_attention,
                })
            },
            || {
                checks::check_decoder_layer(&checks::DecoderLayerImpl {
                    decoder_layer: m::decoder_layer::decoder_layer,
                })
            },
            || {
                checks::check_sinusoidal_positions(&checks::SinusoidalImpl {
                    sinusoidal_positions: m::sinusoidal_positions::sinusoidal_positions,
                })
            },
        )
    }};
}

/// Every exercise, in the order they should be done.
pub fn all() -> Vec<Exercise> {
    let s: (Check, Check, Check, Check) = implementations!(crate::exercises);
    #[cfg(anatomy_solutions)]
    let r: [Option<Check>; 4] = {
        let r: (Check, Check, Check, Check) = implementations!(crate::exercises::solutions);
        [Some(r.0), Some(r.1), Some(r.2), Some(r.3)]
    };
    #[cfg(not(anatomy_solutions))]
    let r: [Option<Check>; 4] = [None; 4];
    vec![
        Exercise {
            name: "causal_mask",
            summary: "build the lower-triangular mask and hide the future from the softmax",
            student: s.0,
            solution: r[0],
        },
        Exercise {
            name: "cross_attention",
            summary: "encoder-decoder attention, the chapter's homework",
            student: s.1,
            solution: r[1],
        },
        Exercise {
            name: "decoder_layer",
            summary: "masked self-attention, cross-attention and feed-forward, pre-layer-norm",
            student: s.2,
            solution: r[2],
        },
        Exercise {
            name: "sinusoidal_positions",
            summary: "the fixed sine/cosine positional encoding",
            student: s.3,
            solution: r[3],
        },
    ]
}

impl Exercise {
    /// The student's file, relative to the project.
    pub fn file(&self) -> String {
        format!("exercises/{}.rs", self.name)
    }

    /// The hint file, relative to the project.
    pub fn hint(&self) -> String {
        format!("exercises/hints/{}.md", self.name)
    }

    /// Grades the student's file (or, with `solutions`, the reference solution).
    pub fn check(&self, solutions: bool) -> Outcome {
        let check = if solutions { self.solution } else { Some(self.student) };
        match check {
            Some(check) => run_check(self.name, check),
            None => Outcome {
                name: self.name,
                status: Status::Failed,
                message: "this copy of the crate has no solutions/ folder".into(),
            },
        }
    }
}

/// Runs a check, turning a panic into an outcome: `todo!()` means "not done", anything else a failure
/// with the panic's message. The default panic report is silenced meanwhile, so the grader's output
/// stays readable.
pub fn run_check(name: &'static str, check: impl FnOnce() -> checks::CheckResult) -> Outcome {
    let previous_hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let result = panic::catch_unwind(AssertUnwindSafe(check));
    panic::set_hook(previous_hook);
    let (status, message) = match result {
        Ok(Ok(())) => (Status::Passed, "passed".to_string()),
        Ok(Err(message)) => (Status::Failed, message),
        Err(payload) => {
            let text = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".into());
            if let Some(rest) =
                text.strip_prefix("not yet implemented").or_else(|| text.strip_prefix("not implemented"))
            {
                let what = rest.trim_start_matches(':').trim();
                (
                    Status::NotDone,
                    if what.is_empty() { "not done yet".into() } else { format!("not done yet ({what})") },
                )
            } else {
                (Status::Failed, format!("panicked: {}", tidy_panic(&text)))
            }
        }
    };
    Outcome { name, status, message }
}

/// The useful part of a panic message. tch's errors arrive as `...Err` value: Torch("<message>\n<C++ stack>")`:
/// keep LibTorch's first line, not the stack.
fn tidy_panic(text: &str) -> String {
    match text.split_once("Torch(\"") {
        Some((_, rest)) => {
            let first = rest.split("\\n").next().unwrap_or(rest).split('\n').next().unwrap_or(rest);
            format!("LibTorch: {}", first.trim_end_matches("\")").trim_end_matches('"'))
        }
        None => text.lines().next().unwrap_or_default().to_string(),
    }
}
