//! A deliberately naive evaluation, written straight from the layouts document and independent of
//! the kernels: the specification the fast paths are tested against, and the arithmetic of the
//! trainer's block attribution (which sums each block's rows apart and evaluates the network
//! without one of them). Slow (it allocates and sums in 64-bit integers); never use it in a
//! search.

use plugin_api::Color;

use super::network::Network;

/// The network's output for `stm` from the sorted unique active indices of each perspective
/// (`active[Color::index()]`).
///
/// Follows `thesis-layouts.md` literally: 16-bit accumulators (the 64-bit sum truncated, which
/// is the wrapping 16-bit sum), `clamp(·, 0, 127)`, 32-bit hidden and output sums (truncated
/// likewise), arithmetic shifts by 6 and 4.
pub fn evaluate(net: &Network, active: [&[u32]; 2], stm: Color) -> i32 {
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
