//! Figures that hold for any seed. A training run's figure depends on its seed (the data drawn, the first
//! weights, dropout), so one seed's number says little about what a learner who picks another will see.
//! These helpers read a range of seeds (`1-20`, `0,3,7`) and summarise a figure over the runs as its mean,
//! minimum and maximum, each extreme with the seed that gave it: what the chapters quote.
use anyhow::{bail, ensure, Result};
use serde::Serialize;

/// Seeds written as `A-B` (both ends included), a comma-separated list, or a mix: `1-5,9`.
pub fn parse(text: &str) -> Result<Vec<i64>> {
    let mut seeds = Vec::new();
    for part in text.split(',').map(str::trim) {
        let range = part.split_once('-').filter(|(a, _)| !a.is_empty());
        match range {
            Some((a, b)) => {
                let (Ok(a), Ok(b)) = (a.trim().parse::<i64>(), b.trim().parse::<i64>()) else {
                    bail!("--seeds: {part:?} is not a range of seeds: write e.g. 1-20, or 0,3,7");
                };
                ensure!(a <= b, "--seeds: {part:?} runs backwards: write the smaller seed first");
                ensure!(b - a < 1000, "--seeds: {part:?} is more than 1000 runs: give a shorter range");
                seeds.extend(a..=b);
            }
            None => match part.parse::<i64>() {
                Ok(seed) => seeds.push(seed),
                Err(_) => bail!("--seeds: {part:?} is not a seed: write e.g. 1-20, or 0,3,7"),
            },
        }
    }
    ensure!(!seeds.is_empty(), "--seeds: no seed given: write e.g. 1-20");
    Ok(seeds)
}

/// A figure over several seeds: its mean, and its lowest and highest values with their seeds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub runs: usize,
    pub mean: f64,
    pub min: f64,
    pub min_seed: i64,
    pub max: f64,
    pub max_seed: i64,
}

impl Spread {
    /// The spread of `(seed, value)` pairs; `None` for no pairs.
    pub fn of(values: &[(i64, f64)]) -> Option<Spread> {
        let (min_seed, min) = *values.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
        let (max_seed, max) = *values.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
        let mean = values.iter().map(|v| v.1).sum::<f64>() / values.len() as f64;
        Some(Spread { runs: values.len(), mean, min, min_seed, max, max_seed })
    }

    /// `mean 99.6 % (lowest 98.9 %, seed 7; highest 100.0 %, seed 2; 20 seeds)` as a percentage, or with
    /// three decimals (`mean 0.957 (lowest 0.944, …)`).
    pub fn words(&self, percent: bool) -> String {
        let f = |v: f64| if percent { format!("{:.1} %", 100.0 * v) } else { format!("{v:.3}") };
        format!(
            "mean {} (lowest {}, seed {}; highest {}, seed {}; {} seeds)",
            f(self.mean),
            f(self.min),
            self.min_seed,
            f(self.max),
            self.max_seed,
            self.runs
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_lists_and_mistakes() {
        assert_eq!(parse("1-5").unwrap(), vec![1, 2, 3, 4, 5]);
        assert_eq!(parse("0,3, 7").unwrap(), vec![0, 3, 7]);
        assert_eq!(parse("1-2,9").unwrap(), vec![1, 2, 9]);
        assert_eq!(parse("-3").unwrap(), vec![-3]);
        for bad in ["", "5-1", "a-b", "1-", "x", "0-5000"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_spread_names_the_seeds_of_its_extremes() {
        let s = Spread::of(&[(1, 0.99), (2, 1.0), (3, 0.95)]).unwrap();
        assert_eq!((s.runs, s.min, s.min_seed, s.max, s.max_seed), (3, 0.95, 3, 1.0, 2));
        assert!((s.mean - 0.98).abs() < 1e-12);
        assert_eq!(Spread::of(&[]), None);
    }
}
