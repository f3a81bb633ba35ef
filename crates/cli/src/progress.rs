//! The progress bars: the library reports where a run stands (`training::Progress`, or chapter 11's
//! `gpt::train::GptProgress`; the tour's waits), the command line draws it with indicatif (loss, learning
//! rate, speed, ETA; a spinner for a wait). Where stderr is no terminal, indicatif draws nothing, so the
//! tour's write plain lines there instead: no long step is silent in a log either.
use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};
use transformer_anatomy::training::Progress;

/// A bar on stderr when `show`, else nothing; feed it every `Progress` the training hands out. With
/// `lines` (the quarter of the run the next line is for), a plain line at the first report and each quarter.
pub struct TrainingBar(Option<ProgressBar>, Option<u64>);

impl TrainingBar {
    pub fn new(steps: u64, show: bool) -> Self {
        let target = if show { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(Some(steps), target);
        bar.set_style(
            ProgressStyle::with_template("training {bar:30} {pos}/{len} steps  {msg}  eta {eta}")
                .expect("a valid template")
                .progress_chars("█▉ "),
        );
        TrainingBar(Some(bar), None)
    }

    /// Also plain lines on stderr where it is no terminal (the tour's), as the bar's words.
    pub fn with_lines(self) -> Self {
        TrainingBar(self.0, (!std::io::stderr().is_terminal()).then_some(0))
    }

    pub fn update(&mut self, p: &Progress) {
        self.show(p.step, p.steps, p.loss, p.lr, &format!("{:.0} tokens/s", p.tokens_per_s));
    }

    /// Moves the bar to `step` of `steps` with the loss, the rate and a speed; clears it after the last.
    pub fn show(&mut self, step: u64, steps: u64, loss: f64, lr: f64, speed: &str) {
        let words = format!("loss {loss:.3}  lr {lr:.2e}  {speed}");
        if let Some(quarter) = self.1.filter(|q| step * 4 >= q * steps) {
            let _ = writeln!(std::io::stderr(), "   training {step}/{steps} steps  {words}");
            self.1 = Some(quarter + 1);
        }
        if let Some(bar) = &self.0 {
            bar.set_position(step);
            bar.set_message(words);
            if step == steps {
                bar.finish_and_clear();
            }
        }
    }
}

/// A wait with nothing to print yet (the tour drawing an encoder's random weights): a spinner with its words
/// and the seconds so far, cleared when dropped; where stderr is no terminal, the words once as a line.
pub fn waiting(words: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        let _ = writeln!(std::io::stderr(), "   {words} …");
    }
    let style = ProgressStyle::with_template("   {spinner} {msg} ({elapsed})").expect("a valid template");
    let spinner = ProgressBar::new_spinner().with_style(style).with_finish(ProgressFinish::AndClear);
    spinner.set_message(words.to_string());
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    spinner
}
