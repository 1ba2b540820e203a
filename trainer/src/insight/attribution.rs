//! Block attribution: how much a network takes from each term of its feature set, measured on
//! positions with the quantized network exactly as the engine evaluates it
//! ([`nnue::reference`]'s arithmetic: 16-bit accumulators, clipped ReLUs, shifts).
//!
//! Per position and perspective every term's rows are summed apart (`c_t = Σ W1[i]` over the
//! term's active features), so the accumulator is `b1 + Σ_t c_t` and the network *without* term
//! t is the same forward pass from `b1 + Σ_{u≠t} c_u`: the term's inputs removed, its rows
//! zeroed. In a shape with PSQT buckets the term's PSQT weights go with its rows; the position's
//! piece count picks the layer stack and bucket, with or without the term. Per term the report
//! gives
//!
//! - the loss over the positions without the term, against the loss with every term (the
//!   trainer's score loss, `|W(target) − W(output)|^p`), and the mean absolute change of the
//!   evaluation when it is removed, in score units;
//! - the mean absolute contribution `|c_t|` to an accumulator value (per position, perspective
//!   and neuron, in float units: 1.0 = 127) and its share of the sum over terms;
//! - the share of its features never active in these positions ("dead"), of features never
//!   active in the training data ("never trained": their rows kept their random
//!   initialisation; only when the training data is given), and of all-zero rows;
//! - the root mean square of its weights (float units).
//!
//! The same pass collects the activations for the histograms: what the first layer hands on
//! (clipped accumulators or pairwise products) and the first hidden layer's outputs.

use anyhow::Result;
use rayon::prelude::*;
use serde::Serialize;

use nnue::Network;
use nnue::reference::{accumulator, forward, psqt_sum, row_sum};
use plugin_api::{Color, FeatureSet, term_bit};

use crate::data::{self, Format, ReadOptions, Sample};
use crate::model::ACTIVATION_SCALE;
use crate::train::loss::ScoreLoss;

/// One term's line of the attribution table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TermAttribution {
    /// The term (`all`, `ph`, `k*all`).
    pub term: String,
    /// Its number of features.
    pub features: u32,
    /// The loss over the positions with the term's rows zeroed.
    pub loss_without: f64,
    /// Mean `|eval − eval without the term|`, score units.
    pub mean_abs_eval_change: f64,
    /// Mean `|c_t|` per position, perspective and neuron (float units, 1.0 = 127).
    pub mean_abs_contribution: f64,
    /// `mean_abs_contribution` over the sum of all terms'.
    pub contribution_share: f64,
    /// Share of the term's features never active in the positions.
    pub dead: f64,
    /// Share of the term's features never active in the training data, when it was scanned.
    pub never_trained: Option<f64>,
    /// Share of the term's rows that are all zero.
    pub zero_rows: f64,
    /// Root mean square of the term's first-layer weights (float units).
    pub weight_rms: f64,
}

/// The attribution of a network over positions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Attribution {
    /// Positions evaluated.
    pub positions: usize,
    /// The loss with every term.
    pub loss: f64,
    /// One line per term, in the feature set's order.
    pub terms: Vec<TermAttribution>,
    /// Counts of the first-layer activations `clamp(acc, 0, 127)`, by value (0..=127), over
    /// every neuron of both perspectives.
    pub first_layer_activations: Vec<u64>,
    /// Counts of the hidden activations by value (0..=127).
    pub hidden_activations: Vec<u64>,
    /// Per layer stack (when the shape has several), the positions it evaluated and the counts
    /// of its first hidden layer's activations by value (0..=127).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stacks: Vec<StackActivations>,
}

/// What one layer stack did over the positions that use it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StackActivations {
    /// Positions evaluated with this stack.
    pub positions: usize,
    /// Counts of its first hidden layer's activations by value (0..=127).
    pub hidden_activations: Vec<u64>,
}

impl StackActivations {
    /// Share of its hidden activations at 0 and at the clip (127).
    pub fn zero_and_saturated(&self) -> (f64, f64) {
        zero_and_saturated(&self.hidden_activations)
    }
}

/// What one slice of positions adds up to.
#[derive(Clone, Debug)]
struct Partial {
    positions: usize,
    loss: f64,
    loss_without: Vec<f64>,
    eval_change: Vec<f64>,
    abs_contribution: Vec<f64>,
    seen: Vec<bool>,
    x: Vec<u64>,
    hidden: Vec<u64>,
    stack_positions: Vec<usize>,
    stack_hidden: Vec<Vec<u64>>,
}

impl Partial {
    fn new(terms: usize, features: usize, stacks: usize) -> Partial {
        Partial {
            positions: 0,
            loss: 0.0,
            loss_without: vec![0.0; terms],
            eval_change: vec![0.0; terms],
            abs_contribution: vec![0.0; terms],
            seen: vec![false; features],
            x: vec![0; 128],
            hidden: vec![0; 128],
            stack_positions: vec![0; stacks],
            stack_hidden: vec![vec![0; 128]; stacks],
        }
    }

    fn merge(mut self, o: Partial) -> Partial {
        self.positions += o.positions;
        self.loss += o.loss;
        let add = |a: &mut Vec<f64>, b: &[f64]| a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
        add(&mut self.loss_without, &o.loss_without);
        add(&mut self.eval_change, &o.eval_change);
        add(&mut self.abs_contribution, &o.abs_contribution);
        self.seen.iter_mut().zip(&o.seen).for_each(|(a, b)| *a |= b);
        self.x.iter_mut().zip(&o.x).for_each(|(a, b)| *a += b);
        self.hidden
            .iter_mut()
            .zip(&o.hidden)
            .for_each(|(a, b)| *a += b);
        for (k, counts) in o.stack_hidden.iter().enumerate() {
            self.stack_positions[k] += o.stack_positions[k];
            self.stack_hidden[k]
                .iter_mut()
                .zip(counts)
                .for_each(|(a, b)| *a += b);
        }
        self
    }
}

/// The sorted unique active features of each term of `set` for `perspective` (set indices).
fn term_features(set: &FeatureSet, sample: &Sample, perspective: Color) -> Result<Vec<Vec<u32>>> {
    (0..set.terms().len())
        .map(|t| {
            let mut out = Vec::new();
            set.active_terms(&sample.board, perspective, term_bit(t), &mut out)?;
            out.sort_unstable();
            out.dedup();
            Ok(out)
        })
        .collect()
}

fn add_position(
    net: &Network,
    set: &FeatureSet,
    loss: &ScoreLoss,
    s: &Sample,
    acc: &mut Partial,
) -> Result<()> {
    let stm = s.board.turn;
    let terms = set.terms().len();
    // c[p][t]: the rows of term t summed for perspective p (side to move first); q[p][t] its
    // PSQT sums (none without PSQT).
    let (mut c, mut q) = (Vec::with_capacity(2), Vec::with_capacity(2));
    for p in [stm, stm.other()] {
        let features = term_features(set, s, p)?;
        for f in features.iter().flatten() {
            acc.seen[*f as usize] = true;
        }
        c.push(features.iter().map(|f| row_sum(net, f)).collect::<Vec<_>>());
        q.push(
            features
                .iter()
                .map(|f| psqt_sum(net, f))
                .collect::<Vec<_>>(),
        );
    }
    let sum_terms = |parts: &[Vec<i64>], width: usize| -> Vec<i64> {
        (0..width)
            .map(|k| parts.iter().map(|part| part[k]).sum())
            .collect()
    };
    let buckets = net.arch().psqt_buckets;
    let total: Vec<Vec<i64>> = c.iter().map(|p| sum_terms(p, net.l1())).collect();
    let total_psqt: Vec<Vec<i64>> = q.iter().map(|p| sum_terms(p, buckets)).collect();
    let pieces = (s.board.by_color[0] | s.board.by_color[1]).count_ones();
    // The network on the two perspectives' row and PSQT sums.
    let pass = |rows: [&[i64]; 2], psqt: [&[i64]; 2]| {
        let accs = rows.map(|r| accumulator(net, r));
        forward(net, [&accs[0], &accs[1]], psqt, pieces)
    };
    let target = loss.sample_target(f64::from(s.score), s.result);
    let full = pass([&total[0], &total[1]], [&total_psqt[0], &total_psqt[1]]);
    let out = f64::from(full.output);
    acc.positions += 1;
    acc.loss += loss.sample_loss(out, target);
    for &v in &full.x {
        acc.x[v as usize] += 1;
    }
    let stack = net.arch().stack_of(pieces);
    acc.stack_positions[stack] += 1;
    for &v in &full.hidden {
        acc.hidden[v as usize] += 1;
        acc.stack_hidden[stack][v as usize] += 1;
    }
    let l1 = net.l1() as f64;
    for t in 0..terms {
        let minus = |all: &[i64], part: &[i64]| -> Vec<i64> {
            all.iter().zip(part).map(|(a, b)| a - b).collect()
        };
        let rows = [minus(&total[0], &c[0][t]), minus(&total[1], &c[1][t])];
        let psqt = [
            minus(&total_psqt[0], &q[0][t]),
            minus(&total_psqt[1], &q[1][t]),
        ];
        let reduced = pass([&rows[0], &rows[1]], [&psqt[0], &psqt[1]]);
        let out_t = f64::from(reduced.output);
        acc.loss_without[t] += loss.sample_loss(out_t, target);
        acc.eval_change[t] += (out - out_t).abs();
        acc.abs_contribution[t] += c
            .iter()
            .map(|cp| cp[t].iter().map(|v| v.unsigned_abs() as f64).sum::<f64>())
            .sum::<f64>()
            / (2.0 * l1 * ACTIVATION_SCALE);
    }
    Ok(())
}

/// Attributes `net` (bound to `set`) over `samples`; `trained` marks the features active in
/// the training data, when it was scanned.
pub fn attribute(
    net: &Network,
    set: &FeatureSet,
    samples: &[Sample],
    loss: &ScoreLoss,
    trained: Option<&[bool]>,
) -> Result<Attribution> {
    let terms = set.terms().len();
    let n = set.size() as usize;
    let stacks = net.arch().stacks;
    // Slices summed in order, so that the sums (and the report) do not depend on threads.
    let partials = samples
        .par_chunks(256)
        .map(|chunk| {
            let mut acc = Partial::new(terms, n, stacks);
            for s in chunk {
                add_position(net, set, loss, s, &mut acc)?;
            }
            Ok(acc)
        })
        .collect::<Result<Vec<Partial>>>()?;
    let total = partials
        .into_iter()
        .fold(Partial::new(terms, n, stacks), Partial::merge);
    let positions = total.positions.max(1) as f64;
    let contribution_sum: f64 = total.abs_contribution.iter().sum::<f64>().max(1e-12);
    let l1 = net.l1();
    let weights = net.w1().to_values();
    let lines = set
        .terms()
        .iter()
        .enumerate()
        .map(|(t, term)| {
            let rows = term.offset as usize..(term.offset + term.size) as usize;
            let share = |flags: &[bool]| {
                flags[rows.clone()].iter().filter(|&&f| !f).count() as f64 / term.size as f64
            };
            let block = &weights[rows.start * l1..rows.end * l1];
            let zero_rows = block
                .chunks(l1)
                .filter(|row| row.iter().all(|&w| w == 0))
                .count();
            let squares: f64 = block.iter().map(|&w| f64::from(w).powi(2)).sum();
            TermAttribution {
                term: term.name.clone(),
                features: term.size,
                loss_without: total.loss_without[t] / positions,
                mean_abs_eval_change: total.eval_change[t] / positions,
                mean_abs_contribution: total.abs_contribution[t] / positions,
                contribution_share: total.abs_contribution[t] / contribution_sum,
                dead: share(&total.seen),
                never_trained: trained.map(share),
                zero_rows: zero_rows as f64 / term.size as f64,
                weight_rms: (squares / block.len().max(1) as f64).sqrt() / ACTIVATION_SCALE,
            }
        })
        .collect();
    Ok(Attribution {
        positions: total.positions,
        loss: total.loss / positions,
        terms: lines,
        first_layer_activations: total.x,
        hidden_activations: total.hidden,
        stacks: match stacks {
            1 => Vec::new(),
            _ => total
                .stack_positions
                .iter()
                .zip(total.stack_hidden)
                .map(|(&positions, hidden_activations)| StackActivations {
                    positions,
                    hidden_activations,
                })
                .collect(),
        },
    })
}

/// Marks the features of `set` active (from either perspective) in any position of `files`
/// (format from `format` or each file's extension): what a training run on them could update.
/// Streams the files; the first malformed record is an error.
pub fn trained_features(
    set: &FeatureSet,
    files: &[std::path::PathBuf],
    format: Option<Format>,
) -> Result<Vec<bool>> {
    let mut seen = vec![false; set.size() as usize];
    let mut out = Vec::new();
    for path in files {
        let format = Format::resolve(format, path).map_err(anyhow::Error::msg)?;
        for sample in data::open_reader(path, format, None, ReadOptions::default())? {
            let sample = sample?;
            for p in Color::ALL {
                out.clear();
                set.active(&sample.board, p, &mut out)?;
                for &f in &out {
                    seen[f as usize] = true;
                }
            }
        }
    }
    Ok(seen)
}

impl Attribution {
    /// The table as Markdown.
    pub fn markdown(&self) -> String {
        use std::fmt::Write as _;
        let mut out = format!(
            "Block attribution over {} positions (loss with every block {:.5}):\n\n| Block | N | Loss without it | Δ loss | Mean \\|Δ eval\\| | Mean \\|contribution\\| | Share | Dead | Never trained | Zero rows | Weight RMS |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
            self.positions, self.loss
        );
        let pct = |v: f64| format!("{:.1}%", 100.0 * v);
        for t in &self.terms {
            let _ = writeln!(
                out,
                "| {} | {} | {:.5} | {:+.5} | {:.1} | {:.4} | {} | {} | {} | {} | {:.4} |",
                t.term,
                t.features,
                t.loss_without,
                t.loss_without - self.loss,
                t.mean_abs_eval_change,
                t.mean_abs_contribution,
                pct(t.contribution_share),
                pct(t.dead),
                t.never_trained.map_or("—".into(), pct),
                pct(t.zero_rows),
                t.weight_rms
            );
        }
        out
    }

    /// Share of first-layer activations at 0 and at the clip (127).
    pub fn first_layer_zero_and_saturated(&self) -> (f64, f64) {
        zero_and_saturated(&self.first_layer_activations)
    }

    /// Share of hidden activations at 0 and at the clip (127).
    pub fn hidden_zero_and_saturated(&self) -> (f64, f64) {
        zero_and_saturated(&self.hidden_activations)
    }
}

fn zero_and_saturated(counts: &[u64]) -> (f64, f64) {
    let total = counts.iter().sum::<u64>().max(1) as f64;
    (counts[0] as f64 / total, counts[127] as f64 / total)
}
