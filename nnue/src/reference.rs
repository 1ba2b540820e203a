//! A deliberately naive evaluation, written straight from the layouts document and independent of
//! the kernels: the specification the fast paths are tested against, and the arithmetic of the
//! trainer's block attribution (which sums each block's rows apart and evaluates the network
//! without one of them). Slow (it allocates and sums in 64-bit integers); never use it in a
//! search.

use plugin_api::Color;

use super::network::Network;
use super::shape::{Activation, FtOutput, OutputRule};

/// The network's output for `stm` from the sorted unique active indices of each perspective
/// (`active[Color::index()]`).
///
/// Follows `thesis-layouts.md` literally: 16-bit accumulators (the 64-bit sum truncated, which
/// is the wrapping 16-bit sum), `clamp(·, 0, 127)`, 32-bit hidden and output sums (truncated
/// likewise), arithmetic shifts by 6 and 4.
///
/// Only for the thesis's shape (panics otherwise): other shapes need the piece count,
/// [`evaluate_shape`].
pub fn evaluate(net: &Network, active: [&[u32]; 2], stm: Color) -> i32 {
    assert!(
        net.arch().is_thesis(),
        "reference::evaluate is the thesis's shape; use evaluate_shape"
    );
    let accumulator = |indices: &[u32]| accumulator(net, &row_sum(net, indices));
    let acc_stm = accumulator(active[stm.index()]);
    let acc_opp = accumulator(active[stm.other().index()]);
    forward(net, &acc_stm, &acc_opp).output
}

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

/// The layers after the accumulators.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forward {
    /// The first-layer activations, `clamp(acc, 0, 127)`, side to move's L1 first.
    pub x: Vec<i64>,
    /// The hidden activations, `clamp((b2 + W2·x) >> 6, 0, 127)`.
    pub hidden: Vec<i64>,
    /// The output, `(b3 + W3·hidden) >> 4`.
    pub output: i32,
}

/// The forward pass from the two accumulators (side to move's first).
pub fn forward(net: &Network, acc_stm: &[i64], acc_opp: &[i64]) -> Forward {
    let (l1, l2) = (net.l1(), net.l2());
    let x: Vec<i64> = acc_stm
        .iter()
        .chain(acc_opp)
        .map(|&a| a.clamp(0, 127))
        .collect();
    let mut out: i64 = i64::from(net.b3());
    let mut hidden = Vec::with_capacity(l2);
    for j in 0..l2 {
        let mut s = i64::from(net.b2()[j]);
        for (k, &xk) in x.iter().enumerate() {
            s += i64::from(net.w2()[j * 2 * l1 + k]) * xk;
        }
        let h = i64::from((s as i32) >> 6).clamp(0, 127);
        out += i64::from(net.w3()[j]) * h;
        hidden.push(h);
    }
    Forward {
        x,
        hidden,
        output: (out as i32) >> 4,
    }
}

/// The output of a network of any shape for `stm`, written from the shape's definition
/// ([`crate::shape`]) in 64-bit arithmetic truncated where the engine's types are narrower:
/// accumulators and PSQT sums, the first layer's output, the stack of the position with `pieces`
/// pieces, the output rule.
pub fn evaluate_shape(net: &Network, active: [&[u32]; 2], stm: Color, pieces: u32) -> i32 {
    let arch = net.arch();
    let l1 = net.l1();
    let b = arch.psqt_buckets;
    let bucket = arch.psqt_bucket_of(pieces);
    let persp = [stm.index(), stm.other().index()];
    let accs: Vec<Vec<i64>> = persp
        .iter()
        .map(|&p| accumulator(net, &row_sum(net, active[p])))
        .collect();
    let psqt: Vec<i64> = persp
        .iter()
        .map(|&p| {
            if b == 0 {
                return 0;
            }
            active[p]
                .iter()
                .map(|&i| i64::from(net.psqt()[i as usize * b + bucket]))
                .sum::<i64>()
        })
        .collect();
    let clip = |v: i64| v.clamp(0, 127);
    let mut x: Vec<i64> = Vec::new();
    for acc in &accs {
        match arch.ft_output {
            FtOutput::ClippedRelu => x.extend(acc.iter().map(|&a| clip(a))),
            FtOutput::Pairwise => {
                x.extend((0..l1 / 2).map(|j| (clip(acc[j]) * clip(acc[j + l1 / 2])) / 128))
            }
        }
    }
    let stack = &net.stacks()[arch.stack_of(pieces)];
    let mut skip = 0i64;
    for (i, h) in arch.hidden.iter().enumerate() {
        let layer = &stack[i];
        let y: Vec<i64> = (0..layer.outputs())
            .map(|o| {
                let row = &layer.weights()[o * layer.inputs()..(o + 1) * layer.inputs()];
                let dot: i64 = row.iter().zip(&x).map(|(&w, &v)| i64::from(w) * v).sum();
                i64::from((i64::from(layer.biases()[o]) + dot) as i32)
            })
            .collect();
        if arch.skip && i == 0 {
            skip = y[h.width];
        }
        let crelu = |v: i64| (v.div_euclid(64)).clamp(0, 127);
        x = match h.activation {
            Activation::ClippedRelu => y[..h.width].iter().map(|&v| crelu(v)).collect(),
            Activation::SqrClippedRelu => {
                let sq = y[..h.width].iter().map(|&v| (v * v / (1 << 19)).min(127));
                sq.chain(y[..h.width].iter().map(|&v| crelu(v))).collect()
            }
        };
    }
    let out_layer = &stack[stack.len() - 1];
    let dot: i64 = out_layer
        .weights()
        .iter()
        .zip(&x)
        .map(|(&w, &v)| i64::from(w) * v)
        .sum();
    let out = i64::from((i64::from(out_layer.biases()[0]) + dot) as i32);
    match arch.output {
        OutputRule::Thesis => (out.div_euclid(16)) as i32,
        OutputRule::Stockfish => {
            // C++ division truncates toward zero, as Rust's does on integers.
            let positional = out + skip * 9600 / 8128;
            let psqt = if b == 0 { 0 } else { (psqt[0] - psqt[1]) / 2 };
            ((psqt + positional) / 16) as i32
        }
    }
}
