//! nnue-pytorch's skipping at load: which positions its data loader drops at random, and with
//! what probability (`data_loader/cpp/training_data_loader.cpp`, `make_skip_predicate`, and
//! `lib/training_data_entry.h` at 9f72946). Each rule here is the probability of keeping a
//! position; [`super::filter::Filter`] draws against it from its seeded stream and counts what
//! each rule dropped.
//!
//! - **WDL skip** (`wld_filtered`): keep a position with the probability that its score gives
//!   its game's result, under Stockfish's win-rate model of the ply (fitted on fishtest, `b`
//!   widened by 1.5): positions whose score contradicts the result are mostly dropped.
//! - **Soft early-ply skip** (`soft_early_fen_skipping`, 20): before that ply, keep with a
//!   probability interpolated linearly through (0, 0.1), (6, 0.15), (10, 0.25), (18, 0.75) and
//!   (20, 1).
//! - **Piece-count skip** (its "smart" skipping): keep a position of `pc` pieces with a
//!   probability that steers the kept positions' piece counts toward a target distribution,
//!   a Hermite spline through (0, 0), (8, 0.4), (16, 1), (24, 1), (32, 0.75): from the counts
//!   seen so far, accept `α · ratio(pc)` where `ratio` is the target's share over the seen
//!   share and α makes the rarest count's acceptance 0.025 (at most 97.5% skipped); α is
//!   recomputed after 100, 500, 1000, 2500, 5000 positions and every 10,000 after, when the
//!   history is also halved.
//!
//! nnue-pytorch's random skip N (probability N/(N+1)) is `skip_rate`, its hard early skip E
//! (ply ≤ E) is `min_ply = E + 1`, and its capture/check filter is `skip_capture_bestmove` and
//! `skip_in_check`.

/// Stockfish's win-rate model as nnue-pytorch's loader uses it (`win_rate_model`): the
/// probabilities of a win, a loss and a draw for the side to move of a position at `ply` with
/// `score` in Stockfish's internal units (208 to a pawn, as its binpacks store them).
pub fn win_rate_model(score: i16, ply: u16) -> (f64, f64, f64) {
    let m = f64::from(ply.min(240)) / 64.0;
    let a_s = [-3.68389304, 30.07065921, -60.52878723, 149.53378557];
    let b_s = [-2.0181857, 15.85685038, -29.83452023, 47.59078827];
    let a = ((a_s[0] * m + a_s[1]) * m + a_s[2]) * m + a_s[3];
    let b = (((b_s[0] * m + b_s[1]) * m + b_s[2]) * m + b_s[3]) * 1.5;
    let x = (100.0 * f64::from(score) / 208.0).clamp(-2000.0, 2000.0);
    let w = 1.0 / (1.0 + ((a - x) / b).exp());
    let l = 1.0 / (1.0 + ((a + x) / b).exp());
    (w, l, 1.0 - w - l)
}

/// The WDL skip's probability of keeping a position: how likely its result (1, 0, −1 for the
/// side to move) is under its score (`score_result_prob`).
pub fn wdl_keep(score: i16, ply: u16, result: i8) -> f64 {
    let (w, l, d) = win_rate_model(score, ply);
    match result {
        r if r > 0 => w,
        r if r < 0 => l,
        _ => d,
    }
}

/// The soft early-ply skip's probability of keeping a position at `ply`, the skip ending at
/// `until` (nnue-pytorch's default 20; its default control points).
pub fn early_ply_keep(ply: u16, until: u16) -> f64 {
    let points = [
        (0.0, 0.1),
        (6.0, 0.15),
        (10.0, 0.25),
        (18.0, 0.75),
        (f64::from(until), 1.0),
    ];
    let x = f64::from(ply);
    if ply >= until {
        return 1.0;
    }
    if x <= points[0].0 {
        return points[0].1;
    }
    for pair in points.windows(2) {
        let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
        if x >= x0 && x <= x1 {
            if x1 == x0 {
                return y0;
            }
            return (y0 + (x - x0) / (x1 - x0) * (y1 - y0)).clamp(0.0, 1.0);
        }
    }
    1.0
}

/// The piece-count skip's target: the relative frequency wanted for `pc` pieces, a cubic
/// Hermite spline through nnue-pytorch's `pc_y0..pc_y4` = 0, 0.4, 1, 1, 0.75 at 0, 8, 16, 24,
/// 32 pieces (`desired_piece_count_weights`).
pub fn piece_count_target(pc: u32) -> f64 {
    let y = [0.0, 0.4, 1.0, 1.0, 0.75];
    let x = f64::from(pc);
    if pc == 0 {
        return y[0];
    }
    if pc >= 32 {
        return y[4];
    }
    let i = ((x / 8.0) as usize).min(3);
    let t = (x - i as f64 * 8.0) / 8.0;
    let slope = |k: usize| match k {
        0 => y[1] - y[0],
        4 => y[4] - y[3],
        _ => (y[k + 1] - y[k - 1]) / 2.0,
    };
    let (m0, m1) = (slope(i), slope(i + 1));
    let (t2, t3) = (t * t, t * t * t);
    let value = (2.0 * t3 - 3.0 * t2 + 1.0) * y[i]
        + (t3 - 2.0 * t2 + t) * m0
        + (-2.0 * t3 + 3.0 * t2) * y[i + 1]
        + (t3 - t2) * m1;
    value.max(0.0)
}

/// The most the piece-count skip drops of the rarest piece count.
const MAX_PIECE_COUNT_SKIP: f64 = 0.975;

/// The piece-count skip's state: the piece counts seen (halved every 10,000 positions) and the
/// scale α of the acceptance.
#[derive(Clone, Debug)]
pub struct PieceCountSkip {
    target: [f64; 33],
    target_total: f64,
    seen: [f64; 33],
    seen_total: f64,
    steps: u64,
    alpha: f64,
}

impl Default for PieceCountSkip {
    fn default() -> Self {
        let target: [f64; 33] = std::array::from_fn(|pc| piece_count_target(pc as u32));
        PieceCountSkip {
            target_total: target.iter().sum(),
            target,
            seen: [0.0; 33],
            seen_total: 0.0,
            steps: 0,
            alpha: 1.0,
        }
    }
}

impl PieceCountSkip {
    /// Records a position of `pc` pieces and returns the probability of keeping it.
    pub fn keep(&mut self, pc: u32) -> f64 {
        let pc = pc.min(32) as usize;
        self.seen[pc] += 1.0;
        self.seen_total += 1.0;
        self.steps += 1;
        let s = self.steps;
        if matches!(s, 100 | 500 | 1000 | 2500 | 5000) || (s > 5000 && s.is_multiple_of(10_000)) {
            let min_ratio = (0..33)
                .filter(|&i| self.target[i] > 0.0 && self.seen[i] > 0.0)
                .map(|i| self.ratio(i))
                .fold(f64::INFINITY, f64::min);
            if min_ratio.is_finite() && min_ratio > 0.0 {
                self.alpha = (1.0 - MAX_PIECE_COUNT_SKIP) / min_ratio;
            }
            if s >= 10_000 && s.is_multiple_of(10_000) {
                for v in &mut self.seen {
                    *v *= 0.5;
                }
                self.seen_total *= 0.5;
            }
        }
        if self.target[pc] > 0.0 && self.seen[pc] > 0.0 {
            (self.alpha * self.ratio(pc)).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// The target's share of `pc` pieces over its share of the positions seen.
    fn ratio(&self, pc: usize) -> f64 {
        (self.seen_total * self.target[pc]) / (self.target_total * self.seen[pc])
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
        close(wdl_keep(208, 0, 1), w, 1e-12);
        close(wdl_keep(208, 0, -1), l, 1e-12);
        close(wdl_keep(208, 0, 0), 1.0 - w - l, 1e-12);
        // Worked out: w = 0.333169, l = 0.029439.
        close(w, 0.333169, 1e-6);
        close(l, 0.029439, 1e-6);
        // A winning score that lost is nearly always dropped; beyond 240 plies the model holds.
        assert!(wdl_keep(2000, 60, -1) < 1e-4);
        assert_eq!(wdl_keep(100, 240, 1), wdl_keep(100, 400, 1));
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
        // Positions of 30 pieces four times as often as of 12: after the first update the
        // rarer count relative to its target is kept at 0.025, the others in proportion.
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
        let ratio = |pc: u32, share: f64| piece_count_target(pc) / skip.target_total / share;
        let (r12, r30) = (ratio(12, 0.2), ratio(30, 0.8));
        let min = r12.min(r30);
        // The 100th position (30 pieces) was judged with the new α.
        close(last.1, (0.025 / min * r30).min(1.0), 1e-12);
        assert!(last.1 <= 1.0 && last.1 > 0.0);
    }
}
