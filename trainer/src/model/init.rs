//! How a fresh model's first layer starts ([`FirstLayerInit`]).
//!
//! The start matters more than its size suggests: a first-layer row moves only when its feature
//! is active in a batch, so a row the training data reaches rarely or never keeps its starting
//! value, and in play every such row adds its start to the accumulator. With threat features
//! (tens of thousands of rows, dozens active in a position, many rare) rows started at ±0.09
//! add noise of the order of the clipped ReLU's whole range; started at ±0.004 they add
//! nothing. Measured beside nnue-pytorch (RESULTS.md, "Does this trainer train as well as
//! nnue-pytorch?"), this start alone moved the threat shape at 16M samples from −104 to +16 Elo.

use clap::ValueEnum;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor};

/// How the first layer's weights and bias start (the PSQT columns start at the piece values
/// and the virtual features' rows at zero either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum FirstLayerInit {
    /// nnue-pytorch's (9f72946, `InputFeature.reset_parameters` and
    /// `ComposedFeatureTransformer._reset_bias`): PyTorch's `nn.Linear` rule per term, each
    /// term's rows uniform in ±1/√(its rows), and the bias uniform in ±1/√N.
    NnuePytorch,
    /// This trainer's first start: every row uniform in ±1/(2√32) (the `nn.Linear` rule with
    /// the fan-in taken as the 32 features a position activates, halved) and the bias
    /// 0.5 ± 1/(2√32), so that most accumulators start on the clipped ReLU's slope.
    ActiveFanIn,
}

/// Draws a tensor of `shape` uniformly from `−bound..bound` with `rng` (on the CPU, so the
/// initial weights are the same on every device and every libtorch build).
pub(super) fn uniform(rng: &mut ChaCha8Rng, shape: &[i64], bound: f64) -> Tensor {
    let n: i64 = shape.iter().product();
    let values: Vec<f32> = (0..n)
        .map(|_| (rng.random::<f64>() * 2.0 - 1.0) as f32 * bound as f32)
        .collect();
    Tensor::from_slice(&values).view(shape)
}

impl FirstLayerInit {
    /// The accumulator columns of `W1` (`[rows, l1]`) and `b1` (`[l1]`), drawn from `rng`:
    /// `term_rows` are the rows of each term in order (none: one term of all rows), and the
    /// rows after theirs are the virtual features'.
    pub(super) fn draw(
        self,
        rng: &mut ChaCha8Rng,
        (rows, l1): (i64, i64),
        term_rows: &[u32],
    ) -> (Tensor, Tensor) {
        match self {
            FirstLayerInit::ActiveFanIn => {
                let bound = 1.0 / 32f64.sqrt() / 2.0;
                let w = uniform(rng, &[rows, l1], bound);
                (w, uniform(rng, &[l1], bound) + 0.5)
            }
            FirstLayerInit::NnuePytorch => {
                let terms: Vec<i64> = match term_rows {
                    [] => vec![rows],
                    _ => term_rows.iter().map(|&r| i64::from(r)).collect(),
                };
                let real: i64 = terms.iter().sum();
                let mut parts: Vec<Tensor> = terms
                    .iter()
                    .map(|&r| uniform(rng, &[r, l1], 1.0 / (r.max(1) as f64).sqrt()))
                    .collect();
                // The virtual features' rows, after the terms', start at zero.
                parts.push(Tensor::zeros(
                    [(rows - real).max(0), l1],
                    (Kind::Float, Device::Cpu),
                ));
                let bias = uniform(rng, &[l1], 1.0 / (real.max(1) as f64).sqrt());
                (Tensor::cat(&parts, 0).narrow(0, 0, rows), bias)
            }
        }
    }
}
