//! `anatomy check-gpu` (what `make test-gpu` runs): the chapter's code on a GPU against the same code on
//! the CPU, and with `--pytorch`, against the book's PyTorch code on the same GPU. The checks are
//! `anatomy_tools::gpu_check`; this file prints their table and turns a failed row into exit code 1.
use std::path::PathBuf;

use anatomy_tools::gpu_check::{self, GpuCheck, GpuCheckOptions};
use anyhow::{bail, Result};
use tch::Device;
use transformer_anatomy::model_dir::resolve_model_dir;

use crate::ModelArg;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArg,
    /// A Python whose PyTorch (2.13) sees the same GPU (`make setup CUDA=1` makes one): time the book's
    /// code against ours there, and fail where ours is slower.
    #[arg(long, value_name = "PYTHON")]
    pytorch: Option<PathBuf>,
    /// Timed runs per case and round in the speed checks.
    #[arg(long, default_value_t = 30)]
    repeats: usize,
}

pub fn run(args: Args, device: Device) -> Result<()> {
    gpu_check::require_gpu(device)?;
    let options = GpuCheckOptions {
        model_dir: resolve_model_dir(args.model.model)?,
        pytorch: args.pytorch,
        repeats: args.repeats,
    };
    let runtime = transformer_anatomy::runtime::runtime();
    let gpu = runtime.driver.as_ref().and_then(|d| d.devices.first()).map_or("a GPU".to_string(), |g| g.name.clone());
    println!("LibTorch {} on {gpu}, {device:?}", runtime.libtorch);
    println!("{}", GpuCheck::HEADER);
    let checks = gpu_check::run(&options, device, &mut |c: &GpuCheck| println!("{c}"))?;
    let failed = checks.iter().filter(|c| !c.passed).count();
    if failed > 0 {
        bail!("{failed} of {} GPU checks failed; see the table above", checks.len());
    }
    println!("all {} GPU checks passed", checks.len());
    Ok(())
}
