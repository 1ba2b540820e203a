//! How well a network's evaluation fits held-out scores: one yardstick for networks of any
//! trainer, shape or units. The network is evaluated as the engine evaluates it (host's
//! quantized inference, [`super::quant::quantized_outputs`]) and read in centipawns
//! through its units; the data's scores in centipawns through theirs
//! ([`crate::data::score_units`]); both pass through one win-rate mapping, `W(cp) = σ(cp /
//! 410)` (the thesis's target mapping), and the loss is the mean squared difference.

use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};

use nnue::units::ScoreUnits;
use nnue::{Kernels, Nnue};

use super::quant::quantized_outputs;
use crate::analysis::wdl;
use crate::data::sample::Sample;
use crate::data::{self, Format, score_units};

/// The scale of the win-rate mapping `W(cp) = σ(cp / HELD_OUT_SCALE)`.
pub const HELD_OUT_SCALE: f64 = 410.0;

/// A network's fit to held-out scores.
#[derive(Clone, Debug, PartialEq)]
pub struct HeldOut {
    /// Positions scored.
    pub positions: usize,
    /// Mean of `(W(eval) − W(target))²`.
    pub mse: f64,
    /// The same for the best constant prediction (the targets' mean `W`): what a network must
    /// beat.
    pub constant_mse: f64,
    /// Mean `|eval − target|` in centipawns.
    pub mean_abs_cp: f64,
    /// Pearson's correlation of the evaluations with the targets (centipawns).
    pub correlation: f64,
}

/// W(cp) of the yardstick.
fn win_rate(cp: f64) -> f64 {
    wdl::win_rate(cp, 0.0, HELD_OUT_SCALE)
}

/// Held-out positions with their scores in centipawns: what networks are scored on.
pub struct HeldOutSet {
    /// The positions, in the files' order.
    pub samples: Vec<Sample>,
    /// Each one's score in centipawns.
    pub targets: Vec<f64>,
    /// The units the files' scores were read in (the first file's, when several).
    pub units: ScoreUnits,
}

impl HeldOutSet {
    /// The first `positions` positions of `files` (each of `format`, or of its extension's),
    /// their scores read in `units`, or else in each file's own
    /// ([`score_units::units_of`]).
    pub fn read(
        files: &[PathBuf],
        format: Option<Format>,
        units: Option<ScoreUnits>,
        positions: usize,
    ) -> Result<HeldOutSet> {
        let mut set = HeldOutSet {
            samples: Vec::new(),
            targets: Vec::new(),
            units: units.unwrap_or_default(),
        };
        for (k, path) in files.iter().enumerate() {
            let wanted = positions - set.samples.len();
            if wanted == 0 {
                break;
            }
            let file_format = Format::resolve(format, path).map_err(anyhow::Error::msg)?;
            let file_units = match units {
                Some(u) => u,
                None => {
                    score_units::units_of(path, file_format)
                        .map_err(anyhow::Error::msg)?
                        .0
                }
            };
            if k == 0 {
                set.units = file_units;
            }
            let samples = data::first_samples(path, Some(file_format), wanted, None)?;
            set.targets.extend(
                samples.iter().map(|s| {
                    f64::from(score_units::convert(s, file_units, ScoreUnits::Centipawns))
                }),
            );
            set.samples.extend(samples);
        }
        Ok(set)
    }

    /// How well the network `nnue` fits these scores, evaluated as the engine evaluates it
    /// (with `kernels`) and read in centipawns through the units it records.
    pub fn score(&self, nnue: &Nnue, kernels: Kernels) -> Result<HeldOut> {
        let units = nnue.network().units();
        let raw = quantized_outputs(nnue, kernels, &self.samples)?;
        let evals: Vec<f64> = self
            .samples
            .iter()
            .zip(&raw)
            .map(|(s, &v)| f64::from(units.centipawns_at(v as i32, score_units::material(s))))
            .collect();
        Ok(held_out(&evals, &self.targets))
    }

    /// [`HeldOutSet::score`] of the network file `path`, loaded with the plugins of `registry`.
    pub fn score_file(
        &self,
        path: &Path,
        registry: &plugin_api::PluginRegistry,
        kernels: Kernels,
    ) -> Result<HeldOut> {
        let nnue = Nnue::load(path, registry).map_err(|e| anyhow!("{e}"))?;
        self.score(&nnue, kernels)
    }
}

/// The fit of `evals` to `targets`, both in centipawns, position by position.
pub fn held_out(evals: &[f64], targets: &[f64]) -> HeldOut {
    assert_eq!(evals.len(), targets.len(), "one evaluation per target");
    let n = evals.len().max(1) as f64;
    let w_targets: Vec<f64> = targets.iter().map(|&t| win_rate(t)).collect();
    let mse = evals
        .iter()
        .zip(&w_targets)
        .map(|(&e, &t)| (win_rate(e) - t).powi(2))
        .sum::<f64>()
        / n;
    let mean_w = w_targets.iter().sum::<f64>() / n;
    let constant_mse = w_targets.iter().map(|t| (t - mean_w).powi(2)).sum::<f64>() / n;
    let mean_abs_cp = evals
        .iter()
        .zip(targets)
        .map(|(e, t)| (e - t).abs())
        .sum::<f64>()
        / n;
    let (me, mt) = (
        evals.iter().sum::<f64>() / n,
        targets.iter().sum::<f64>() / n,
    );
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (e, t) in evals.iter().zip(targets) {
        sxy += (e - me) * (t - mt);
        sxx += (e - me).powi(2);
        syy += (t - mt).powi(2);
    }
    let correlation = if sxx > 0.0 && syy > 0.0 {
        sxy / (sxx * syy).sqrt()
    } else {
        0.0
    };
    HeldOut {
        positions: evals.len(),
        mse,
        constant_mse,
        mean_abs_cp,
        correlation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_perfect_network_scores_zero_and_a_constant_one_the_baseline() {
        let targets = [-300.0, -50.0, 0.0, 120.0, 800.0];
        let perfect = held_out(&targets, &targets);
        assert_eq!(perfect.mse, 0.0);
        assert!((perfect.correlation - 1.0).abs() < 1e-12);
        assert!(perfect.constant_mse > 0.0);
        // A network that says the targets' mean win rate everywhere scores the baseline.
        let mean_w = targets.iter().map(|&t| win_rate(t)).sum::<f64>() / 5.0;
        let cp = HELD_OUT_SCALE * (mean_w / (1.0 - mean_w)).ln();
        let constant = held_out(&[cp; 5], &targets);
        assert!((constant.mse - constant.constant_mse).abs() < 1e-12);
        assert_eq!(constant.correlation, 0.0);
        // Twice the scores: worse, still perfectly correlated.
        let doubled: Vec<f64> = targets.iter().map(|t| 2.0 * t).collect();
        let d = held_out(&doubled, &targets);
        assert!(d.mse > 0.0 && (d.correlation - 1.0).abs() < 1e-12);
        assert!((d.mean_abs_cp - 254.0).abs() < 1e-9);
    }
}
