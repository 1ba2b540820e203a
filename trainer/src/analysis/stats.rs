//! Dataset statistics: positions, games, score and ply histograms, piece counts, mobility per
//! role (the thesis's Figure 13) and feature activation counts per block.
//!
//! Statistics are computed per unit of the input (in parallel) and merged in file order, so the
//! result does not depend on the number of threads.
//!
//! **Games** are counted from the sequence of samples: a sample starts a new game unless its ply
//! is above the previous sample's and, where both results are known, its result is the previous
//! one's, negated once per ply in between (results are side-to-move relative). Skipped
//! positions inside a game do not split it; two games that follow each other only "continue"
//! when the second starts at a higher ply with a consistent result, which real generators
//! (restarting from low plies) practically never produce.
//!
//! **Mobility** follows the thesis's definition (the one its `mb`/`mc` blocks use): for every
//! piece of either colour, its destination squares (pawns: diagonal captures of enemy pieces and
//! the single push; other pieces: attacks minus own pieces; no castling, no en passant) that do
//! not leave its own king attacked; M(role, colour) is the union over the pieces of that role and
//! colour, and the histogram counts |M| per role over both colours. Figure 13 leaves out the
//! value 0 for knights, bishops, rooks and queens (mostly absent pieces); the counts here keep
//! it.

use std::fmt::Write as _;

use plugin_api::{BlockError, Board, Color, FeatureSet, Role};
use shakmaty::{Bitboard, attacks};

use crate::data::Sample;
use crate::data::sample::attackers;
use crate::loader::batch::NO_RESULT;

/// Width of a score histogram bin.
pub const SCORE_BIN: i32 = 50;
/// The score histogram covers `-SCORE_RANGE..SCORE_RANGE`, plus one bin each side for the rest.
pub const SCORE_RANGE: i32 = 3000;
/// Plies above this share the last ply bin.
pub const MAX_PLY_BIN: usize = 400;
/// Mobility values above this share the last bin (a queen reaches 27).
pub const MAX_MOBILITY: usize = 27;

const SCORE_BINS: usize = (2 * SCORE_RANGE / SCORE_BIN) as usize + 2;

/// Per-index activation counts of a feature set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureCounts {
    /// For each index, the positions × perspectives in which it was active.
    pub counts: Vec<u64>,
    /// Positions × perspectives counted.
    pub views: u64,
}

/// How many indices of one block are dead or rare.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockActivity {
    /// The term's name (a block, or a product like `k*all`).
    pub name: String,
    /// Its number of indices.
    pub size: u32,
    /// Indices never active.
    pub dead: u32,
    /// Indices active in fewer than the rare threshold of views (but not dead).
    pub rare: u32,
    /// Active indices per view, on average.
    pub mean_active: f64,
}

/// Accumulated statistics (mergeable).
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// Samples counted (after filtering).
    pub positions: u64,
    /// Games, as estimated above.
    pub games: u64,
    /// Score histogram: bin 0 below `-SCORE_RANGE`, then bins of `SCORE_BIN`, last at or above
    /// `SCORE_RANGE`.
    pub score_hist: Vec<u64>,
    /// Sum of scores.
    pub score_sum: f64,
    /// Sum of squared scores.
    pub score_sq_sum: f64,
    /// Smallest score.
    pub score_min: i16,
    /// Largest score.
    pub score_max: i16,
    /// Ply histogram (the last bin holds plies ≥ `MAX_PLY_BIN`).
    pub ply_hist: Vec<u64>,
    /// Positions by number of pieces on the board (0..=32).
    pub piece_hist: Vec<u64>,
    /// Pieces counted per colour and role.
    pub role_totals: [[u64; 6]; 2],
    /// Mobility histogram per role (index = |M|, both colours counted).
    pub mobility: [Vec<u64>; 6],
    /// Positions by result for the side to move: loss, draw, win, unknown.
    pub results: [u64; 4],
    /// Positions by side to move (White, Black).
    pub stm: [u64; 2],
    /// Positions whose side to move is in check.
    pub in_check: u64,
    /// Positions whose best move captures.
    pub captures: u64,
    /// Positions without a best move.
    pub no_move: u64,
    /// Feature activation counts, if a feature set was given.
    pub features: Option<FeatureCounts>,
    first: Option<(u16, i8)>,
    last: Option<(u16, i8)>,
}

fn continues(prev: (u16, i8), next: (u16, i8)) -> bool {
    if next.0 <= prev.0 {
        return false;
    }
    if prev.1 == NO_RESULT || next.1 == NO_RESULT {
        return true;
    }
    let flips = (next.0 - prev.0) % 2 == 1;
    next.1 == if flips { -prev.1 } else { prev.1 }
}

impl Stats {
    /// Empty statistics; with a feature set, activation counts too.
    pub fn new(features: Option<&FeatureSet>) -> Stats {
        Stats {
            positions: 0,
            games: 0,
            score_hist: vec![0; SCORE_BINS],
            score_sum: 0.0,
            score_sq_sum: 0.0,
            score_min: i16::MAX,
            score_max: i16::MIN,
            ply_hist: vec![0; MAX_PLY_BIN + 1],
            piece_hist: vec![0; 33],
            role_totals: [[0; 6]; 2],
            mobility: std::array::from_fn(|_| vec![0; MAX_MOBILITY + 1]),
            results: [0; 4],
            stm: [0; 2],
            in_check: 0,
            captures: 0,
            no_move: 0,
            features: features.map(|set| FeatureCounts {
                counts: vec![0; set.size() as usize],
                views: 0,
            }),
            first: None,
            last: None,
        }
    }

    /// The score bin of a score.
    pub fn score_bin(score: i16) -> usize {
        let s = i32::from(score);
        if s < -SCORE_RANGE {
            0
        } else if s >= SCORE_RANGE {
            SCORE_BINS - 1
        } else {
            1 + ((s + SCORE_RANGE) / SCORE_BIN) as usize
        }
    }

    /// Counts one sample; `scratch` is reused for feature indices.
    pub fn add(
        &mut self,
        s: &Sample,
        set: Option<&FeatureSet>,
        scratch: &mut Vec<u32>,
    ) -> Result<(), BlockError> {
        self.positions += 1;
        let key = (s.ply, s.result.unwrap_or(NO_RESULT));
        match self.last {
            Some(prev) if continues(prev, key) => {}
            _ => self.games += 1,
        }
        if self.first.is_none() {
            self.first = Some(key);
        }
        self.last = Some(key);
        self.score_hist[Self::score_bin(s.score)] += 1;
        let v = f64::from(s.score);
        self.score_sum += v;
        self.score_sq_sum += v * v;
        self.score_min = self.score_min.min(s.score);
        self.score_max = self.score_max.max(s.score);
        self.ply_hist[(s.ply as usize).min(MAX_PLY_BIN)] += 1;
        let b = &s.board;
        self.piece_hist[(b.occupied().count_ones() as usize).min(32)] += 1;
        for c in Color::ALL {
            for r in Role::ALL {
                self.role_totals[c.index()][r.index()] += u64::from(b.pieces(c, r).count_ones());
            }
        }
        for per_colour in mobility(b) {
            for (r, &v) in per_colour.iter().enumerate() {
                self.mobility[r][(v as usize).min(MAX_MOBILITY)] += 1;
            }
        }
        self.results[match s.result {
            Some(-1) => 0,
            Some(0) => 1,
            Some(1) => 2,
            _ => 3,
        }] += 1;
        self.stm[b.turn.index()] += 1;
        self.in_check += u64::from(s.in_check());
        self.captures += u64::from(s.best_move_is_capture());
        self.no_move += u64::from(s.best_move.is_none());
        if let (Some(set), Some(fc)) = (set, self.features.as_mut()) {
            for p in [b.turn, b.turn.other()] {
                scratch.clear();
                set.active(b, p, scratch)?;
                scratch.sort_unstable();
                scratch.dedup();
                for &i in scratch.iter() {
                    fc.counts[i as usize] += 1;
                }
                fc.views += 1;
            }
        }
        Ok(())
    }

    /// Adds the statistics of the samples that come right after these (order matters for the
    /// game count only).
    pub fn merge(&mut self, o: &Stats) {
        self.positions += o.positions;
        self.games += o.games;
        if let (Some(a), Some(b)) = (self.last, o.first)
            && continues(a, b)
        {
            self.games -= 1;
        }
        if self.first.is_none() {
            self.first = o.first;
        }
        if o.last.is_some() {
            self.last = o.last;
        }
        let add = |a: &mut Vec<u64>, b: &Vec<u64>| {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        };
        add(&mut self.score_hist, &o.score_hist);
        self.score_sum += o.score_sum;
        self.score_sq_sum += o.score_sq_sum;
        self.score_min = self.score_min.min(o.score_min);
        self.score_max = self.score_max.max(o.score_max);
        add(&mut self.ply_hist, &o.ply_hist);
        add(&mut self.piece_hist, &o.piece_hist);
        for c in 0..2 {
            for r in 0..6 {
                self.role_totals[c][r] += o.role_totals[c][r];
            }
        }
        for r in 0..6 {
            add(&mut self.mobility[r], &o.mobility[r]);
        }
        for i in 0..4 {
            self.results[i] += o.results[i];
        }
        self.stm[0] += o.stm[0];
        self.stm[1] += o.stm[1];
        self.in_check += o.in_check;
        self.captures += o.captures;
        self.no_move += o.no_move;
        match (&mut self.features, &o.features) {
            (Some(a), Some(b)) => {
                add(&mut a.counts, &b.counts);
                a.views += b.views;
            }
            (None, Some(b)) => self.features = Some(b.clone()),
            _ => {}
        }
    }

    /// Dead and rare indices per term (a block or a product); an index is rare when active in fewer than
    /// `rare_fraction` of the views (at least one view, and never dead).
    pub fn block_activity(&self, set: &FeatureSet, rare_fraction: f64) -> Vec<BlockActivity> {
        let Some(fc) = &self.features else {
            return Vec::new();
        };
        let threshold = (rare_fraction * fc.views as f64).max(1.0);
        set.terms()
            .iter()
            .map(|term| {
                let range = term.offset as usize..(term.offset + term.size) as usize;
                let counts = &fc.counts[range];
                let dead = counts.iter().filter(|&&c| c == 0).count() as u32;
                let rare = counts
                    .iter()
                    .filter(|&&c| c > 0 && (c as f64) < threshold)
                    .count() as u32;
                let total: u64 = counts.iter().sum();
                BlockActivity {
                    name: term.name.clone(),
                    size: term.size,
                    dead,
                    rare,
                    mean_active: total as f64 / fc.views.max(1) as f64,
                }
            })
            .collect()
    }

    /// A text report.
    pub fn report(&self, set: Option<&FeatureSet>, rare_fraction: f64) -> String {
        let mut o = String::new();
        let n = self.positions.max(1) as f64;
        let pct = |x: u64| 100.0 * x as f64 / n;
        let _ = writeln!(o, "positions {}", self.positions);
        let _ = writeln!(
            o,
            "games {} (estimated; {:.1} positions per game)",
            self.games,
            self.positions as f64 / self.games.max(1) as f64
        );
        let _ = writeln!(
            o,
            "side to move: White {:.1}%, Black {:.1}%",
            pct(self.stm[0]),
            pct(self.stm[1])
        );
        let _ = writeln!(
            o,
            "result for the side to move: win {:.1}%, draw {:.1}%, loss {:.1}%, unknown {:.1}%",
            pct(self.results[2]),
            pct(self.results[1]),
            pct(self.results[0]),
            pct(self.results[3])
        );
        let _ = writeln!(
            o,
            "in check {:.2}%, best move captures {:.2}%, no best move {:.2}%",
            pct(self.in_check),
            pct(self.captures),
            pct(self.no_move)
        );
        if self.positions > 0 {
            let mean = self.score_sum / n;
            let sd = (self.score_sq_sum / n - mean * mean).max(0.0).sqrt();
            let _ = writeln!(
                o,
                "score: mean {mean:.1}, sd {sd:.1}, min {}, max {}",
                self.score_min, self.score_max
            );
        }
        let _ = writeln!(o, "\nscore histogram (bins of {SCORE_BIN}):");
        for (i, &c) in self.score_hist.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let label = if i == 0 {
                format!("< {}", -SCORE_RANGE)
            } else if i == SCORE_BINS - 1 {
                format!(">= {SCORE_RANGE}")
            } else {
                let lo = -SCORE_RANGE + (i as i32 - 1) * SCORE_BIN;
                format!("{lo}..{}", lo + SCORE_BIN)
            };
            let _ = writeln!(o, "  {label:>13} {c:>12} {:6.2}%", pct(c));
        }
        let _ = writeln!(o, "\nply histogram (bins of 10):");
        for (lo, chunk) in self.ply_hist.chunks(10).enumerate() {
            let c: u64 = chunk.iter().sum();
            if c > 0 {
                let label = if lo * 10 >= MAX_PLY_BIN {
                    format!(">= {MAX_PLY_BIN}")
                } else {
                    format!("{}..{}", lo * 10, lo * 10 + 9)
                };
                let _ = writeln!(o, "  {label:>10} {c:>12} {:6.2}%", pct(c));
            }
        }
        let _ = writeln!(o, "\npieces on the board:");
        for (k, &c) in self.piece_hist.iter().enumerate() {
            if c > 0 {
                let _ = writeln!(o, "  {k:>3} {c:>12} {:6.2}%", pct(c));
            }
        }
        let _ = writeln!(o, "\nmean pieces per position (White / Black):");
        for r in Role::ALL {
            let _ = writeln!(
                o,
                "  {:<6} {:6.3} / {:6.3}",
                role_name(r),
                self.role_totals[0][r.index()] as f64 / n,
                self.role_totals[1][r.index()] as f64 / n
            );
        }
        let _ = writeln!(
            o,
            "\nmobility |M| per role (thesis Figure 13; both colours, share of role-colour pairs):"
        );
        let _ = write!(o, "  {:>3}", "|M|");
        for r in Role::ALL {
            let _ = write!(o, " {:>8}", role_name(r));
        }
        let _ = writeln!(o);
        let last_used = (0..=MAX_MOBILITY)
            .rev()
            .find(|&v| self.mobility.iter().any(|h| h[v] > 0))
            .unwrap_or(0);
        for v in 0..=last_used {
            let _ = write!(o, "  {v:>3}");
            for r in 0..6 {
                let _ = write!(o, " {:>7.3}%", 50.0 * self.mobility[r][v] as f64 / n);
            }
            let _ = writeln!(o);
        }
        if let Some(set) = set {
            let _ = writeln!(
                o,
                "\nfeature activation ({}; rare: active in < {rare_fraction:e} of the position views):",
                set.name()
            );
            let _ = writeln!(
                o,
                "  {:<8} {:>7} {:>7} {:>7} {:>12}",
                "block", "size", "dead", "rare", "mean active"
            );
            for b in self.block_activity(set, rare_fraction) {
                let _ = writeln!(
                    o,
                    "  {:<8} {:>7} {:>7} {:>7} {:>12.2}",
                    b.name, b.size, b.dead, b.rare, b.mean_active
                );
            }
        }
        o
    }
}

/// The English name of a role.
pub fn role_name(r: Role) -> &'static str {
    ["pawn", "knight", "bishop", "rook", "queen", "king"][r.index()]
}

/// |M(role, colour)| of a board, by the thesis's mobility definition (module docs), indexed
/// `[colour][role]`.
pub fn mobility(b: &Board) -> [[u8; 6]; 2] {
    let mut out = [[0u8; 6]; 2];
    let occ = b.occupied();
    for c in Color::ALL {
        let Some(king) = b.king(c) else { continue };
        let own = b.by_color[c.index()];
        let enemy = b.by_color[c.other().index()];
        let in_check = attackers(b, u32::from(king), c.other(), occ) != 0;
        for r in Role::ALL {
            let mut union = 0u64;
            let mut pieces = b.pieces(c, r);
            while pieces != 0 {
                let from = pieces.trailing_zeros();
                pieces &= pieces - 1;
                let sq = shakmaty::Square::new(from);
                let mut targets = match r {
                    Role::Pawn => {
                        let scolor = if c == Color::White {
                            shakmaty::Color::White
                        } else {
                            shakmaty::Color::Black
                        };
                        let push = if c == Color::White {
                            from + 8
                        } else {
                            from.wrapping_sub(8)
                        };
                        let mut t = attacks::pawn_attacks(scolor, sq).0 & enemy;
                        if push < 64 && occ & (1u64 << push) == 0 {
                            t |= 1u64 << push;
                        }
                        t
                    }
                    Role::Knight => attacks::knight_attacks(sq).0 & !own,
                    Role::Bishop => attacks::bishop_attacks(sq, Bitboard(occ)).0 & !own,
                    Role::Rook => attacks::rook_attacks(sq, Bitboard(occ)).0 & !own,
                    Role::Queen => attacks::queen_attacks(sq, Bitboard(occ)).0 & !own,
                    Role::King => attacks::king_attacks(sq).0 & !own,
                };
                // Only a king move, a check, or a piece on a line through its king can make a
                // destination illegal.
                let may_be_pinned = attacks::ray(shakmaty::Square::new(u32::from(king)), sq).0 != 0;
                if r == Role::King || in_check || may_be_pinned {
                    let mut kept = 0u64;
                    while targets != 0 {
                        let to = targets.trailing_zeros();
                        targets &= targets - 1;
                        let after = (occ & !(1u64 << from)) | (1u64 << to);
                        let king_sq = if r == Role::King { to } else { u32::from(king) };
                        // The captured piece (on `to`) no longer attacks: mask it out.
                        let mut board = *b;
                        board.by_color[c.other().index()] &= !(1u64 << to);
                        if attackers(&board, king_sq, c.other(), after) == 0 {
                            kept |= 1u64 << to;
                        }
                    }
                    targets = kept;
                }
                union |= targets;
            }
            out[c.index()][r.index()] = union.count_ones() as u8;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(fen: &str) -> Sample {
        Sample::from_fen(fen)
    }

    #[test]
    fn mobility_of_the_start_position() {
        let m = mobility(&sample("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").board);
        // Pawns: 8 single pushes; knights: a3, c3, f3, h3; nothing else moves.
        assert_eq!(m, [[8, 4, 0, 0, 0, 0]; 2]);
    }

    #[test]
    fn mobility_respects_pins_and_checks() {
        // The e2 knight is pinned by the e8 rook: no moves. The king has d1, f1, d2, f2 (e2 is
        // its own knight), minus nothing. Black's rook: e7..e3 (5) + the knight (capture) + the
        // 8th rank d8..a8 (4) and f8, g8 (h8 king) = 12.
        let m = mobility(&sample("4r2k/8/8/8/8/8/4N3/4K3 w - - 0 1").board);
        assert_eq!(m[0][Role::Knight.index()], 0);
        assert_eq!(m[0][Role::King.index()], 4);
        assert_eq!(m[1][Role::Rook.index()], 12);
        // In check: only moves that block or capture count. Rook a1 can block on e1? No: the
        // check is from e8 along the file; rook a3 can go to e3 only.
        let m = mobility(&sample("4r2k/8/8/8/8/R7/8/4K3 w - - 0 1").board);
        assert_eq!(m[0][Role::Rook.index()], 1);
        assert_eq!(m[0][Role::King.index()], 4);
    }

    #[test]
    fn games_merge_across_units() {
        let a = sample("4k3/8/8/8/8/8/8/4K3 w - - 0 1");
        let seq: Vec<Sample> = [(10u16, 1i8), (11, -1), (13, -1), (4, 0), (5, 0), (2, 1)]
            .into_iter()
            .map(|(ply, r)| Sample {
                ply,
                result: Some(r),
                ..a
            })
            .collect();
        let mut scratch = Vec::new();
        let mut whole = Stats::new(None);
        for s in &seq {
            whole.add(s, None, &mut scratch).unwrap();
        }
        assert_eq!(whole.games, 3);
        for cut in 0..=seq.len() {
            let mut x = Stats::new(None);
            let mut y = Stats::new(None);
            for s in &seq[..cut] {
                x.add(s, None, &mut scratch).unwrap();
            }
            for s in &seq[cut..] {
                y.add(s, None, &mut scratch).unwrap();
            }
            x.merge(&y);
            assert_eq!(x, whole, "cut {cut}");
        }
    }

    #[test]
    fn score_bins() {
        assert_eq!(Stats::score_bin(-32000), 0);
        assert_eq!(Stats::score_bin(-3000), 1);
        assert_eq!(Stats::score_bin(0), 61);
        assert_eq!(Stats::score_bin(2999), SCORE_BINS - 2);
        assert_eq!(Stats::score_bin(3000), SCORE_BINS - 1);
    }
}
