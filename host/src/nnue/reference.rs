//! A deliberately naive evaluation, written straight from the layouts document and independent of
//! the kernels: the specification the fast paths are tested against. Slow (it allocates and
//! sums in 64-bit integers); never use it in a search.

use plugin_api::Color;

use super::network::Network;

/// The network's output for `stm` from the sorted unique active indices of each perspective
/// (`active[Color::index()]`).
///
/// Follows `thesis-layouts.md` literally: 16-bit accumulators (the 64-bit sum truncated, which
/// is the wrapping 16-bit sum), `clamp(·, 0, 127)`, 32-bit hidden and output sums (truncated
/// likewise), arithmetic shifts by 6 and 4.
pub fn evaluate(net: &Network, active: [&[u32]; 2], stm: Color) -> i32 {
    let (l1, l2) = (net.l1(), net.l2());
    let accumulator = |indices: &[u32]| -> Vec<i64> {
        (0..l1)
            .map(|k| {
                let sum: i64 = i64::from(net.b1()[k])
                    + indices
                        .iter()
                        .map(|&i| i64::from(net.w1().value(i, k)))
                        .sum::<i64>();
                i64::from(sum as i16)
            })
            .collect()
    };
    let acc_stm = accumulator(active[stm.index()]);
    let acc_opp = accumulator(active[stm.other().index()]);
    let x: Vec<i64> = acc_stm
        .iter()
        .chain(&acc_opp)
        .map(|&a| a.clamp(0, 127))
        .collect();
    let mut out: i64 = i64::from(net.b3());
    for j in 0..l2 {
        let mut s = i64::from(net.b2()[j]);
        for (k, &xk) in x.iter().enumerate() {
            s += i64::from(net.w2()[j * 2 * l1 + k]) * xk;
        }
        let h = i64::from((s as i32) >> 6).clamp(0, 127);
        out += i64::from(net.w3()[j]) * h;
    }
    (out as i32) >> 4
}
