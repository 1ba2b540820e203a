//! A deliberately naive evaluation, written straight from the layouts document and independent of
//! the kernels: the specification the fast paths are tested against, and the arithmetic of the
//! trainer's block attribution (which sums each block's rows apart and evaluates the network
//! without one of them). Slow (it allocates and sums in 64-bit integers); never use it in a
//! search.

use plugin_api::Color;

use super::layers::SkipRead;
use super::network::Network;
use super::shape::{FtOutput, OutputRule};

/// `Σ W1[i]` over `indices`, per neuron, in 64 bits (no bias, no truncation): one block's
/// contribution to an accumulator.
pub fn row_sum(net: &Network, indices: &[u32]) -> Vec<i64> {
    (0..net.l1())
        .map(|k| {
            indices
                .iter()
                .map(|&i| i64::from(net.w1().value(i, k)))
                .sum::<i64>()
        })
        .collect()
}

/// The accumulator of a perspective from the sum of its rows: `b1 + rows`, truncated to 16 bits
/// (the engine's wrapping `i16` arithmetic).
pub fn accumulator(net: &Network, rows: &[i64]) -> Vec<i64> {
    net.b1()
        .iter()
        .zip(rows)
        .map(|(&b, &r)| i64::from((i64::from(b) + r) as i16))
        .collect()
}

/// `Σ PSQT[i][b]` over `indices` for every bucket b, in 64 bits: one block's contribution to a
/// perspective's PSQT sums (empty without PSQT).
pub fn psqt_sum(net: &Network, indices: &[u32]) -> Vec<i64> {
    let b = net.arch().psqt_buckets;
    (0..b)
        .map(|k| {
            indices
                .iter()
                .map(|&i| i64::from(net.psqt()[i as usize * b + k]))
                .sum::<i64>()
        })
        .collect()
}

/// The layers after the accumulators.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forward {
    /// What the first layer hands on: `clamp(acc, 0, 127)` of both perspectives (side to
    /// move's L1 first), or the pairwise products `clamp(a_j) · clamp(a_{j+L1/2}) / 128` (clip
    /// 127) or `/ 512` (clip 255).
    pub x: Vec<i64>,
    /// The first hidden layer's activations (of the position's stack; the squared ones first
    /// for [`Activation::SqrClippedRelu`](crate::Activation::SqrClippedRelu)).
    pub hidden: Vec<i64>,
    /// The output: `(b3 + W3·hidden) >> 4`, or Stockfish's `(psqt + positional) / 16` (15.1),
    /// or `psqt / 16 + positional / 16` (today).
    pub output: i32,
}

/// The forward pass of a network of any shape, written from the shape's definition
/// ([`crate::shape`]) in 64-bit arithmetic truncated where the engine's types are narrower: from
/// the accumulators and PSQT sums of both perspectives (side to move's first; no PSQT sums
/// without PSQT), through the first layer's output and the stack of a position with `pieces`
/// pieces, to the output rule.
pub fn forward(net: &Network, acc: [&[i64]; 2], psqt: [&[i64]; 2], pieces: u32) -> Forward {
    let arch = net.arch();
    let l1 = net.l1();
    let clip = |v: i64| v.clamp(0, i64::from(arch.ft_output.clip()));
    let shift = arch.ft_output.product_shift();
    let mut x: Vec<i64> = Vec::new();
    for acc in acc {
        let half = |j: usize| (acc[j], acc[j + l1 / 2]);
        match arch.ft_output {
            FtOutput::ClippedRelu => x.extend(acc.iter().map(|&a| clip(a))),
            FtOutput::Pairwise | FtOutput::Pairwise255 => x.extend(
                (0..l1 / 2)
                    .map(half)
                    .map(|(a, b)| (clip(a) * clip(b)) >> shift),
            ),
        }
    }
    let ft = x.clone();
    let stack = &net.stacks()[arch.stack_of(pieces)];
    let plan = net.plan();
    let mut skip = 0i64;
    let mut hidden = Vec::new();
    // The hidden activations, placed as the plan places them.
    let mut acts = vec![0i64; plan.acts_len()];
    // A value truncated to the engine's 32 bits.
    let i32_of = |v: i64| i64::from(v as i32);
    for (i, step) in plan.hidden.iter().enumerate() {
        let layer = &stack[i];
        let x = match plan.input_of(i) {
            None => &x[..],
            Some(before) => &acts[before],
        };
        let y: Vec<i64> = (0..layer.outputs())
            .map(|o| {
                let row = &layer.weights()[o * layer.inputs()..(o + 1) * layer.inputs()];
                let dot: i64 = row.iter().zip(x).map(|(&w, &v)| i64::from(w) * v).sum();
                i32_of(i64::from(layer.biases()[o]) + dot)
            })
            .collect();
        if i == 0 {
            skip = match plan.skip {
                SkipRead::None => 0,
                SkipRead::Sum(k) => y[k],
                SkipRead::Difference(a, b) => i32_of(y[a] - y[b]),
            };
        }
        let activated = step.activation.reference(&y[..step.width], step.shift);
        acts[step.acts.clone()].copy_from_slice(&activated);
        if i == 0 {
            hidden = activated;
        }
    }
    let inputs = &acts[plan.output.reads.clone()];
    let out_layer = &stack[stack.len() - 1];
    let dot: i64 = out_layer
        .weights()
        .iter()
        .zip(inputs)
        .map(|(&w, &v)| i64::from(w) * v)
        .sum();
    let out = i32_of(i64::from(out_layer.biases()[0]) + dot);
    let bucket = arch.psqt_bucket_of(pieces);
    // C++ division truncates toward zero, as Rust's does on integers.
    let term = match arch.psqt_buckets {
        0 => 0,
        _ => (psqt[0][bucket] - psqt[1][bucket]) / 2,
    };
    let output = match arch.output {
        OutputRule::Thesis => (out.div_euclid(16)) as i32,
        OutputRule::Stockfish => {
            let positional = out + skip * 9600 / 8128;
            ((term + positional) / 16) as i32
        }
        OutputRule::StockfishScaled => {
            let positional = i32_of(out + skip) * 9600 / 16384;
            (term / 16 + positional / 16) as i32
        }
    };
    Forward {
        x: ft,
        hidden,
        output,
    }
}

/// The output of a network for `stm` from the sorted unique active indices of each perspective
/// (`active[Color::index()]`), for a position with `pieces` pieces: [`forward`] of their
/// accumulators and PSQT sums.
///
/// Follows the layouts literally (`thesis-layouts.md`, [`crate::shape`]): 16-bit accumulators
/// (the 64-bit sum truncated, which is the wrapping 16-bit sum), `clamp(·, 0, 127)`, 32-bit
/// layer sums (truncated likewise), the shifts and divisions of the output rule.
pub fn evaluate(net: &Network, active: [&[u32]; 2], stm: Color, pieces: u32) -> i32 {
    let persp = [active[stm.index()], active[stm.other().index()]];
    let accs = persp.map(|a| accumulator(net, &row_sum(net, a)));
    let psqt = persp.map(|a| psqt_sum(net, a));
    forward(net, [&accs[0], &accs[1]], [&psqt[0], &psqt[1]], pieces).output
}
