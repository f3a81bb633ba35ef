//! The training progress bar: the library reports where a run stands (`training::Progress`, or chapter
//! 11's `gpt::train::GptProgress`), the command line draws it with indicatif (loss, learning rate,
//! speed, ETA).
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use transformer_anatomy::training::Progress;

/// A bar on stderr when `show`, else nothing; feed it every `Progress` the training hands out.
pub struct TrainingBar(Option<ProgressBar>);

impl TrainingBar {
    pub fn new(steps: u64, show: bool) -> Self {
        let target = if show { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(Some(steps), target);
        bar.set_style(
            ProgressStyle::with_template("training {bar:30} {pos}/{len} steps  {msg}  eta {eta}")
                .expect("a valid template")
                .progress_chars("█▉ "),
        );
        TrainingBar(Some(bar))
    }

    pub fn update(&mut self, p: &Progress) {
        self.show(p.step, p.steps, p.loss, p.lr, &format!("{:.0} tokens/s", p.tokens_per_s));
    }

    /// Moves the bar to `step` of `steps` with the loss, the rate and a speed; clears it after the last.
    pub fn show(&mut self, step: u64, steps: u64, loss: f64, lr: f64, speed: &str) {
        if let Some(bar) = &self.0 {
            bar.set_position(step);
            bar.set_message(format!("loss {loss:.3}  lr {lr:.2e}  {speed}"));
            if step == steps {
                bar.finish_and_clear();
            }
        }
    }
}
