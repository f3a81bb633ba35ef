//! `anatomy tour`: the chapter's steps in order on one text (`anatomy_tools::tour` writes them; this
//! file reads the arguments and draws what the tour reports: a spinner while a step draws its random
//! weights, the last step's training bar).
use anatomy_tools::tour::TourProgress;
use anyhow::Result;
use tch::Device;
use transformer_anatomy::model_dir::resolve_model_dir;
use transformer_anatomy::Tokenizer;

use crate::progress::{waiting, TrainingBar};
use crate::ModelArg;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArg,
    /// The seed for the random weights, so that two runs print the same values.
    #[arg(long, default_value_t = 42)]
    seed: i64,
    /// The text to walk through the chapter with.
    #[arg(default_value = "time flies like an arrow")]
    text: String,
}

pub fn run(args: Args, device: Device) -> Result<()> {
    let tokenizer = Tokenizer::from_model_dir(resolve_model_dir(args.model.model)?)?;
    let mut bar = TrainingBar::new(anatomy_tools::tour::TRAINING_STEPS, true).with_lines();
    let mut spinner = None;
    let mut draw = |p: TourProgress| match p {
        TourProgress::Working(words) => spinner = Some(waiting(words)),
        TourProgress::Done => spinner = None, // cleared
        TourProgress::Training(p) => bar.update(p),
    };
    anatomy_tools::tour::tour(&tokenizer, &args.text, args.seed, device, &mut std::io::stdout(), &mut draw)
}
