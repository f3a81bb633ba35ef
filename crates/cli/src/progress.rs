//! The training progress bar: the library reports where a run stands (`training::Progress`), the
//! command line draws it with indicatif (loss, learning rate, tokens/s, ETA).
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
        if let Some(bar) = &self.0 {
            bar.set_position(p.step);
            bar.set_message(format!("loss {:.3}  lr {:.2e}  {:.0} tokens/s", p.loss, p.lr, p.tokens_per_s));
            if p.step == p.steps {
                bar.finish_and_clear();
            }
        }
    }
}
