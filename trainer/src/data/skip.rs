//! The skipping rules of nnue-pytorch's data loader, as probabilities of keeping a position.
//! [`super::filter::Filter`] draws against each from its seeded stream and counts what each
//! rule dropped.
//!
//! The rules and their constants are nnue-pytorch's (official-stockfish/nnue-pytorch at
//! 9f72946: the skip settings of `data_loader/cpp/training_data_loader.cpp` and the win-rate
//! model of `data_loader/cpp/lib/training_data_entry.h`); they are written here from their
//! description, in this crate's terms:
//!
//! - **WDL skip**: keep a position with the probability that its score gives its game's
//!   result, under a win-rate model of the game's ply ([`NNUE_PYTORCH_WIN_RATE`]): positions
//!   whose score contradicts the result are mostly dropped.
//! - **Soft early-ply skip** (until ply 20 by default): before that ply, keep with a
//!   probability that rises by straight segments through (0, 0.1), (6, 0.15), (10, 0.25),
//!   (18, 0.75) to (until, 1).
//! - **Piece-count skip**: steer the kept positions' piece counts toward a target
//!   distribution, a smooth curve through (0, 0), (8, 0.4), (16, 1), (24, 1), (32, 0.75)
//!   ([`PieceCountSkip`]).
//!
//! Where the data's scores are centipawns (this project's), the WDL skip reads them as the
//! centipawns it converts Stockfish's internal units to.
//!
//! nnue-pytorch's random skip N (probability N/(N+1)) is `skip_rate` here, its hard early skip
//! E (ply ≤ E) is `min_ply = E + 1`, and its capture/check filter is `skip_capture` and
//! `skip_in_check`.

use nnue::units::ScoreUnits;

/// A curve through points joined by straight segments: at `x`, the first segment whose ends
/// hold `x` between them decides; before the first point the curve is the first point's value.
struct Polyline<'a>(&'a [(f64, f64)]);

impl Polyline<'_> {
    fn at(&self, x: f64) -> f64 {
        let points = self.0;
        if x <= points[0].0 {
            return points[0].1;
        }
        points
            .windows(2)
            .find(|segment| segment[0].0 <= x && x <= segment[1].0)
            .map_or(1.0, |segment| {
                let ((x0, y0), (x1, y1)) = (segment[0], segment[1]);
                if x1 == x0 {
                    y0
                } else {
                    y0 + (x - x0) / (x1 - x0) * (y1 - y0)
                }
            })
    }
}

/// A cubic Hermite spline through values at equally spaced knots `0, step, 2·step, …`, each
/// knot's slope the centred difference of its neighbours (one-sided at the two ends), per
/// step; constant beyond the last knot.
struct KnotSpline<const N: usize> {
    step: f64,
    values: [f64; N],
}

impl<const N: usize> KnotSpline<N> {
    /// The slope at knot `k`, per step.
    fn slope(&self, k: usize) -> f64 {
        let y = &self.values;
        match k {
            0 => y[1] - y[0],
            k if k == N - 1 => y[k] - y[k - 1],
            k => (y[k + 1] - y[k - 1]) / 2.0,
        }
    }

    fn at(&self, x: f64) -> f64 {
        let last = N - 1;
        if x <= 0.0 {
            return self.values[0];
        }
        if x >= last as f64 * self.step {
            return self.values[last];
        }
        let k = ((x / self.step) as usize).min(last - 1);
        let t = x / self.step - k as f64;
        // The Hermite basis: the two values and the two slopes, weighted by cubics in t.
        let (t2, t3) = (t * t, t * t * t);
        (2.0 * t3 - 3.0 * t2 + 1.0) * self.values[k]
            + (t3 - 2.0 * t2 + t) * self.slope(k)
            + (-2.0 * t3 + 3.0 * t2) * self.values[k + 1]
            + (t3 - t2) * self.slope(k + 1)
    }
}

/// A win-rate model: the side to move of a position of score `x` (centipawns) wins with
/// probability `σ((x − a)/b)` and loses with `σ((−x − a)/b)`, draws otherwise, where `a` and
/// `b` are cubics in `ply / 64` (the ply capped); a score in internal units counts
/// `units_per_pawn` to a pawn.
pub struct WinRateModel {
    /// The cubic of `a`, highest power first.
    pub a: [f64; 4],
    /// The cubic of `b`, highest power first.
    pub b: [f64; 4],
    /// A factor on `b` (above 1: flatter, more draws).
    pub b_scale: f64,
    /// The ply beyond which the model holds as at this ply.
    pub max_ply: u16,
    /// Internal units per pawn, where the data's scores are in Stockfish's internal units.
    pub units_per_pawn: f64,
    /// The centipawns beyond which a score counts as this many.
    pub max_centipawns: f64,
}

/// The win-rate model nnue-pytorch's WDL skip uses: Stockfish's fit on fishtest games (its
/// coefficients), `b` widened by 1.5, up to ply 240, reading Stockfish's internal units as 208
/// to a pawn (as nnue-pytorch reads its binpacks), clamped to ±2000 centipawns.
pub const NNUE_PYTORCH_WIN_RATE: WinRateModel = WinRateModel {
    a: [-3.68389304, 30.07065921, -60.52878723, 149.53378557],
    b: [-2.0181857, 15.85685038, -29.83452023, 47.59078827],
    b_scale: 1.5,
    max_ply: 240,
    units_per_pawn: 208.0,
    max_centipawns: 2000.0,
};

impl WinRateModel {
    /// The probabilities of a win, a loss and a draw for the side to move of a position at
    /// `ply` with `score` in `units` (centipawns as they are; Stockfish's internal units at
    /// [`units_per_pawn`](Self::units_per_pawn) to a pawn).
    pub fn outcomes(&self, score: i16, ply: u16, units: ScoreUnits) -> (f64, f64, f64) {
        let m = f64::from(ply.min(self.max_ply)) / 64.0;
        let cubic = |c: &[f64; 4]| ((c[0] * m + c[1]) * m + c[2]) * m + c[3];
        let (a, b) = (cubic(&self.a), cubic(&self.b) * self.b_scale);
        let per_pawn = match units {
            ScoreUnits::Centipawns => 100.0,
            ScoreUnits::Stockfish | ScoreUnits::StockfishWdl => self.units_per_pawn,
        };
        let x =
            (100.0 * f64::from(score) / per_pawn).clamp(-self.max_centipawns, self.max_centipawns);
        let win = 1.0 / (1.0 + ((a - x) / b).exp());
        let loss = 1.0 / (1.0 + ((a + x) / b).exp());
        (win, loss, 1.0 - win - loss)
    }

    /// The probability of `result` (1, 0, −1 for the side to move) for a position at `ply`
    /// with `score` in `units`.
    pub fn probability_of(&self, result: i8, score: i16, ply: u16, units: ScoreUnits) -> f64 {
        let (win, loss, draw) = self.outcomes(score, ply, units);
        match result.signum() {
            1 => win,
            -1 => loss,
            _ => draw,
        }
    }
}

/// The WDL skip's probability of keeping a position: how likely its result (1, 0, −1 for the
/// side to move) is under its score, in the data's `units`.
pub fn wdl_keep(score: i16, ply: u16, result: i8, units: ScoreUnits) -> f64 {
    NNUE_PYTORCH_WIN_RATE.probability_of(result, score, ply, units)
}

/// The soft early-ply skip's probability of keeping a position at `ply`, the skip ending at
/// `until` (20 by default).
pub fn early_ply_keep(ply: u16, until: u16) -> f64 {
    if ply >= until {
        return 1.0;
    }
    let points = [
        (0.0, 0.1),
        (6.0, 0.15),
        (10.0, 0.25),
        (18.0, 0.75),
        (f64::from(until), 1.0),
    ];
    Polyline(&points).at(f64::from(ply)).clamp(0.0, 1.0)
}

/// The piece-count skip's target: the relative frequency wanted for `pc` pieces, never below 0.
pub fn piece_count_target(pc: u32) -> f64 {
    const TARGET: KnotSpline<5> = KnotSpline {
        step: 8.0,
        values: [0.0, 0.4, 1.0, 1.0, 0.75],
    };
    TARGET.at(f64::from(pc)).max(0.0)
}

/// The most the piece-count skip drops of the piece count that is most over its target share.
const MAX_PIECE_COUNT_SKIP: f64 = 0.975;

/// Piece counts 0 to 32.
const PIECE_COUNTS: usize = 33;

/// Whether the piece-count skip rescales its acceptance after its `n`-th position: after 100,
/// 500, 1,000, 2,500 and 5,000, then every 10,000.
fn rescales_after(n: u64) -> bool {
    matches!(n, 100 | 500 | 1000 | 2500 | 5000) || (n > 5000 && n.is_multiple_of(10_000))
}

/// The piece-count skip: a rejection sampler that keeps a position of `pc` pieces with
/// probability `α · wanted(pc) / seen(pc)`, the target's share of that count over its share of
/// the positions seen so far, so that the kept positions' counts follow the target. `α` is set
/// after 100, 500, 1,000, 2,500 and 5,000 positions and every 10,000 after, so that the count
/// seen most above its target share is kept with probability 1 − 0.975; the history of counts
/// seen is halved every 10,000 positions, so that it follows the data.
#[derive(Clone, Debug)]
pub struct PieceCountSkip {
    target: [f64; PIECE_COUNTS],
    target_total: f64,
    seen: [f64; PIECE_COUNTS],
    seen_total: f64,
    positions: u64,
    alpha: f64,
}

impl Default for PieceCountSkip {
    fn default() -> Self {
        let target: [f64; PIECE_COUNTS] = std::array::from_fn(|pc| piece_count_target(pc as u32));
        PieceCountSkip {
            target_total: target.iter().sum(),
            target,
            seen: [0.0; PIECE_COUNTS],
            seen_total: 0.0,
            positions: 0,
            alpha: 1.0,
        }
    }
}

impl PieceCountSkip {
    /// Records a position of `pc` pieces and returns the probability of keeping it.
    pub fn keep(&mut self, pc: u32) -> f64 {
        let pc = (pc as usize).min(PIECE_COUNTS - 1);
        self.seen[pc] += 1.0;
        self.seen_total += 1.0;
        self.positions += 1;
        if rescales_after(self.positions) {
            self.rescale();
        }
        self.over_seen(pc)
            .map_or(0.0, |ratio| (self.alpha * ratio).clamp(0.0, 1.0))
    }

    /// Sets `α` from the count most above its target share; every 10,000 positions, halves the
    /// history.
    fn rescale(&mut self) {
        let lowest = (0..PIECE_COUNTS)
            .filter_map(|pc| self.over_seen(pc))
            .fold(f64::INFINITY, f64::min);
        if lowest.is_finite() && lowest > 0.0 {
            self.alpha = (1.0 - MAX_PIECE_COUNT_SKIP) / lowest;
        }
        if self.positions.is_multiple_of(10_000) {
            self.seen.iter_mut().for_each(|n| *n *= 0.5);
            self.seen_total *= 0.5;
        }
    }

    /// The target's share of `pc` pieces over its share of the positions seen, where both are
    /// above zero.
    fn over_seen(&self, pc: usize) -> Option<f64> {
        (self.target[pc] > 0.0 && self.seen[pc] > 0.0)
            .then(|| (self.seen_total * self.target[pc]) / (self.target_total * self.seen[pc]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) {
        assert!((a - b).abs() < eps, "{a} != {b}");
    }

    #[test]
    fn wdl_keep_is_the_models_probability_of_the_result() {
        // Ply 0: a = 149.53378557, b = 1.5 · 47.59078827; 208 units = 100 cp.
        let (a, b) = (149.53378557f64, 1.5 * 47.59078827);
        let w = 1.0 / (1.0 + ((a - 100.0) / b).exp());
        let l = 1.0 / (1.0 + ((a + 100.0) / b).exp());
        let sf = ScoreUnits::Stockfish;
        close(wdl_keep(208, 0, 1, sf), w, 1e-12);
        close(wdl_keep(208, 0, -1, sf), l, 1e-12);
        close(wdl_keep(208, 0, 0, sf), 1.0 - w - l, 1e-12);
        // The same position in centipawns: 100 of them.
        close(wdl_keep(100, 0, 1, ScoreUnits::Centipawns), w, 1e-12);
        // Worked out: w = 0.333169, l = 0.029439.
        close(w, 0.333169, 1e-6);
        close(l, 0.029439, 1e-6);
        // A winning score that lost is nearly always dropped; beyond 240 plies the model holds.
        assert!(wdl_keep(2000, 60, -1, sf) < 1e-4);
        assert_eq!(wdl_keep(100, 240, 1, sf), wdl_keep(100, 400, 1, sf));
        // Beyond ±2000 centipawns the score counts as 2000.
        assert_eq!(wdl_keep(i16::MAX, 30, 1, sf), wdl_keep(4160, 30, 1, sf));
    }

    #[test]
    fn early_ply_keep_interpolates_nnue_pytorchs_points() {
        close(early_ply_keep(0, 20), 0.1, 1e-12);
        close(early_ply_keep(3, 20), 0.125, 1e-12);
        close(early_ply_keep(8, 20), 0.2, 1e-12);
        close(early_ply_keep(14, 20), 0.5, 1e-12);
        close(early_ply_keep(19, 20), 0.875, 1e-12);
        close(early_ply_keep(20, 20), 1.0, 1e-12);
        close(early_ply_keep(100, 20), 1.0, 1e-12);
        // An early end: the segments before it decide.
        close(early_ply_keep(8, 10), 0.2, 1e-12);
    }

    #[test]
    fn piece_count_target_is_the_hermite_spline() {
        close(piece_count_target(0), 0.0, 1e-12);
        close(piece_count_target(8), 0.4, 1e-12);
        close(piece_count_target(16), 1.0, 1e-12);
        close(piece_count_target(32), 0.75, 1e-12);
        // Segment 0 at t = 0.5: h10·0.4 + h01·0.4 + h11·0.5 = 0.05 + 0.2 − 0.0625.
        close(piece_count_target(4), 0.1875, 1e-12);
        // Segment 3 (24..32) at t = 0.5: slopes (0.75 − 1)/2 at 24 and 0.75 − 1 at 32.
        let t = 0.5f64;
        let (h00, h10, h01, h11) = (
            2.0 * t * t * t - 3.0 * t * t + 1.0,
            t * t * t - 2.0 * t * t + t,
            -2.0 * t * t * t + 3.0 * t * t,
            t * t * t - t * t,
        );
        close(
            piece_count_target(28),
            h00 * 1.0 + h10 * ((0.75 - 1.0) / 2.0) + h01 * 0.75 + h11 * (0.75 - 1.0),
            1e-12,
        );
    }

    #[test]
    fn piece_count_skip_steers_toward_the_target() {
        // Positions of 30 pieces four times as often as of 12: after the first rescale the
        // count most above its target share is kept at 0.025, the other in proportion.
        let mut skip = PieceCountSkip::default();
        let mut last = (0.0, 0.0);
        for k in 0..100 {
            let pc = if k % 5 == 0 { 12 } else { 30 };
            let p = skip.keep(pc);
            if pc == 12 {
                last.0 = p;
            } else {
                last.1 = p;
            }
        }
        let total: f64 = (0..33).map(piece_count_target).sum();
        let ratio = |pc: u32, share: f64| piece_count_target(pc) / total / share;
        let (r12, r30) = (ratio(12, 0.2), ratio(30, 0.8));
        let min = r12.min(r30);
        // The 100th position (30 pieces) was judged with the new α.
        close(last.1, (0.025 / min * r30).min(1.0), 1e-12);
        assert!(last.1 <= 1.0 && last.1 > 0.0);
    }

    #[test]
    fn the_skip_rescales_on_its_schedule() {
        let at: Vec<u64> = (1..=40_000).filter(|&n| rescales_after(n)).collect();
        assert_eq!(
            at,
            [100, 500, 1000, 2500, 5000, 10_000, 20_000, 30_000, 40_000]
        );
    }
}
