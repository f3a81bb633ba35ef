//! The same training run over several seeds (`anatomy train --seeds 1-20`): each seed's held-out figures,
//! and their spread. The chapter quotes these, not one seed's numbers.
use anyhow::{ensure, Result};
use serde::Serialize;

use super::trainer::{train, TrainOptions};
use crate::seeds::Spread;

/// One seed's run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SeedRun {
    pub seed: u64,
    pub exact_match: f64,
    pub token_accuracy: f64,
    pub loss: f64,
    pub seconds: f64,
}

/// Every seed's run and the spread of each figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    pub task: String,
    pub runs: Vec<SeedRun>,
    pub exact_match: Spread,
    pub token_accuracy: Spread,
    pub seconds: Spread,
}

/// Trains `options` once per seed (everything else the same); `on_run` hears each run as it ends.
pub fn sweep(options: &TrainOptions, seeds: &[i64], on_run: &mut dyn FnMut(&SeedRun)) -> Result<Sweep> {
    ensure!(!seeds.is_empty(), "--seeds: no seed given");
    ensure!(seeds.iter().all(|&s| s >= 0), "--seeds: a training seed is 0 or more");
    let mut runs = Vec::new();
    for &seed in seeds {
        let (_, report) = train(&TrainOptions { seed: seed as u64, ..options.clone() })?;
        let run = SeedRun {
            seed: seed as u64,
            exact_match: report.eval.exact_match,
            token_accuracy: report.eval.token_accuracy,
            loss: report.eval.loss,
            seconds: report.seconds,
        };
        on_run(&run);
        runs.push(run);
    }
    let spread = |f: fn(&SeedRun) -> f64| {
        Spread::of(&runs.iter().map(|r| (r.seed as i64, f(r))).collect::<Vec<_>>()).expect("at least one run")
    };
    Ok(Sweep {
        task: options.task.name().to_string(),
        exact_match: spread(|r| r.exact_match),
        token_accuracy: spread(|r| r.token_accuracy),
        seconds: spread(|r| r.seconds),
        runs,
    })
}
