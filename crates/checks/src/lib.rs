//! # The checks, and all that runs inside a student's program
//!
//! `checks::NAME` grades exercise NAME by calling the student's functions and comparing what they return
//! with independent computations ([`checks`]); [`tape`] records those returns in the probe (the program
//! the grader builds around a student's files, [`probe`]) and replays them to the judge; [`notebook`]
//! runs a check inside the homework notebook and shows its verdict as a card; [`mistakes`] holds the ids
//! a failure is counted by. This is everything a probe links and everything the homework notebook's
//! `:dep` builds: the grader (hand-in reading, sandbox, class) is `anatomy-grade`, the reports
//! `anatomy-report`, the platforms `anatomy-platforms`, and none of it comes with this crate.
use std::panic::{self, AssertUnwindSafe};

use anatomy_course::Status;

pub mod checks;
pub mod mistakes;
pub mod notebook;
pub mod probe;
pub mod tape;

#[cfg(test)]
#[path = "../../../tests/common/test_dir.rs"]
pub(crate) mod test_dir;

/// A check's verdict: its status, the message, and the named mistake when the check recognised one.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    pub status: Status,
    pub message: String,
    pub mistake: Option<checks::Mistake>,
}

/// Runs a check, turning a panic into a status: `todo!()` means "not done", anything else a failure
/// with the panic's message. The default panic report is silenced meanwhile.
pub fn run_check(check: impl FnOnce() -> checks::CheckResult) -> Checked {
    let previous_hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let result = panic::catch_unwind(AssertUnwindSafe(check));
    panic::set_hook(previous_hook);
    let (status, message, mistake) = match result {
        Ok(Ok(())) => (Status::Passed, "passed".to_string(), None),
        Ok(Err(failure)) => (Status::Failed, failure.message, failure.mistake),
        Err(payload) => {
            if let Some(tape::Stopped(why)) = payload.downcast_ref::<tape::Stopped>() {
                return Checked { status: Status::Failed, message: why.clone(), mistake: None };
            }
            let text = panic_text(&*payload);
            if let Some(rest) =
                text.strip_prefix("not yet implemented").or_else(|| text.strip_prefix("not implemented"))
            {
                let what = rest.trim_start_matches(':').trim();
                let message = if what.is_empty() { "not done yet".into() } else { format!("not done yet ({what})") };
                (Status::NotDone, message, None)
            } else {
                (Status::Failed, format!("panicked: {}", tidy_panic(&text)), None)
            }
        }
    };
    Checked { status, message, mistake }
}

/// A panic's message, whatever its payload type.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".into())
}

/// The useful part of a panic message. tch's errors arrive as `...Err` value: Torch("<message>\n<C++ stack>")`:
/// keep LibTorch's first line, not the stack.
pub(crate) fn tidy_panic(text: &str) -> String {
    match text.split_once("Torch(\"") {
        Some((_, rest)) => {
            let first = rest.split("\\n").next().unwrap_or(rest).split('\n').next().unwrap_or(rest);
            format!("LibTorch: {}", first.trim_end_matches("\")").trim_end_matches('"'))
        }
        None => text.lines().next().unwrap_or_default().to_string(),
    }
}
