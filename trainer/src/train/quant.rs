//! The quantization-error report (thesis §4.5.1): the float model against its quantized network
//! evaluated by `host`'s inference (`nnue`, the code behind `host eval`), over positions.

use anyhow::Result;
use std::fmt;
use std::path::Path;

use nnue::{AccumulatorStack, Kernels, Nnue};
use plugin_api::FeatureSet;
use serde::Serialize;

use crate::analysis::plot;
use crate::data::Sample;
use crate::loader::batch::SparseBatch;
use crate::model::{Model, SparseInput, tensor_to_vec};

/// Summary of `quantized − float` over positions, in score units.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuantReport {
    /// Positions compared.
    pub positions: usize,
    /// Mean signed error.
    pub mean: f64,
    /// Standard deviation of the signed error.
    pub std: f64,
    /// Mean absolute error.
    pub mean_abs: f64,
    /// Percentiles of the absolute error: (percent, value) for 50, 90, 95, 99, 100.
    pub abs_percentiles: Vec<(f64, f64)>,
    /// Percentiles of the signed error: 1, 5, 50, 95, 99.
    pub signed_percentiles: Vec<(f64, f64)>,
    /// Mean absolute float output (the scale the errors compare with).
    pub mean_abs_output: f64,
    /// Histogram of the signed error: (low, high, count) per bin.
    pub histogram: Vec<(f64, f64, u64)>,
}

impl QuantReport {
    /// The median absolute error.
    pub fn median_abs(&self) -> f64 {
        self.abs_percentiles[0].1
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p / 100.0 * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// The report of paired outputs (`float[i]`, `quantized[i]`).
pub fn summarize(float: &[f64], quantized: &[f64]) -> QuantReport {
    let err: Vec<f64> = quantized.iter().zip(float).map(|(q, f)| q - f).collect();
    let n = err.len().max(1) as f64;
    let mean = err.iter().sum::<f64>() / n;
    let std = (err.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / n).sqrt();
    let mut abs: Vec<f64> = err.iter().map(|e| e.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let mut signed = err.clone();
    signed.sort_by(f64::total_cmp);
    let lo = signed.first().copied().unwrap_or(0.0).floor().min(-1.0);
    let hi = signed.last().copied().unwrap_or(0.0).ceil().max(1.0);
    let bins = 40usize;
    let width = ((hi - lo) / bins as f64).max(1e-9);
    let mut counts = vec![0u64; bins];
    for e in &err {
        let b = (((e - lo) / width) as usize).min(bins - 1);
        counts[b] += 1;
    }
    QuantReport {
        positions: err.len(),
        mean,
        std,
        mean_abs: abs.iter().sum::<f64>() / n,
        abs_percentiles: [50.0, 90.0, 95.0, 99.0, 100.0]
            .into_iter()
            .map(|p| (p, percentile(&abs, p)))
            .collect(),
        signed_percentiles: [1.0, 5.0, 50.0, 95.0, 99.0]
            .into_iter()
            .map(|p| (p, percentile(&signed, p)))
            .collect(),
        mean_abs_output: float.iter().map(|f| f.abs()).sum::<f64>() / n,
        histogram: counts
            .into_iter()
            .enumerate()
            .map(|(i, c)| (lo + i as f64 * width, lo + (i + 1) as f64 * width, c))
            .collect(),
    }
}

/// The float model's outputs for `samples` (in batches of 4096).
pub fn float_outputs(model: &Model, set: &FeatureSet, samples: &[Sample]) -> Result<Vec<f64>> {
    let mut out = Vec::with_capacity(samples.len());
    let mut scratch = Vec::new();
    for chunk in samples.chunks(4096) {
        let mut batch = SparseBatch::with_capacity(set, chunk.len());
        for s in chunk {
            batch.push(set, &s.board, &mut scratch)?;
        }
        let input = SparseInput::from_batch(&batch).to_device(model.device());
        let scores = tch::no_grad(|| model.forward(&input));
        out.extend(tensor_to_vec(&scores).into_iter().map(f64::from));
    }
    Ok(out)
}

/// The quantized network's outputs for `samples`, through `host`'s evaluator (a fresh
/// accumulator refresh per position, as `host eval` does).
pub fn quantized_outputs(nnue: &Nnue, kernels: Kernels, samples: &[Sample]) -> Result<Vec<f64>> {
    let mut stack = AccumulatorStack::with_max_ply(nnue, kernels, 0);
    samples
        .iter()
        .map(|s| {
            stack.reset(&s.board)?;
            Ok(f64::from(stack.evaluate()))
        })
        .collect()
}

/// Compares `model` with its quantized network `nnue` (bound to the same feature set) over
/// `samples`.
pub fn compare(
    model: &Model,
    nnue: &Nnue,
    kernels: Kernels,
    samples: &[Sample],
) -> Result<QuantReport> {
    let float = float_outputs(model, nnue.features(), samples)?;
    let quantized = quantized_outputs(nnue, kernels, samples)?;
    Ok(summarize(&float, &quantized))
}

/// Writes the histogram of the signed errors as an SVG chart.
pub fn plot_histogram(report: &QuantReport, path: &Path) -> Result<()> {
    let bars: Vec<(f64, f64, f64)> = report
        .histogram
        .iter()
        .map(|&(lo, hi, c)| (lo, hi, c as f64))
        .collect();
    plot::bars(
        path,
        &format!(
            "Quantization error, quantized - float (N = {}, median |error| {:.2})",
            report.positions,
            report.median_abs()
        ),
        "error (score units)",
        "positions",
        &bars,
    )
}

impl fmt::Display for QuantReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "quantization error (quantized - float), {} positions, in score units:",
            self.positions
        )?;
        writeln!(
            f,
            "  mean {:+.3}, std {:.3}, mean |error| {:.3} (mean |float output| {:.1})",
            self.mean, self.std, self.mean_abs, self.mean_abs_output
        )?;
        let list = |v: &[(f64, f64)]| {
            v.iter()
                .map(|(p, x)| format!("p{p:.0} {x:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        writeln!(f, "  |error| percentiles: {}", list(&self.abs_percentiles))?;
        write!(
            f,
            "  signed percentiles: {}",
            list(&self.signed_percentiles)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_statistics() {
        let float = [0.0, 10.0, -5.0, 100.0];
        let quantized = [1.0, 8.0, -5.0, 104.0];
        let r = summarize(&float, &quantized);
        assert_eq!(r.positions, 4);
        assert!((r.mean - 0.75).abs() < 1e-12);
        assert!((r.mean_abs - 1.75).abs() < 1e-12);
        assert_eq!(r.abs_percentiles.last().unwrap().1, 4.0);
        assert_eq!(r.histogram.iter().map(|b| b.2).sum::<u64>(), 4);
        assert!(r.to_string().contains("p50"));
    }
}
