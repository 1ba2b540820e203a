//! Position filters: composable, each counting what it dropped.
//!
//! Rules, applied in this order (a dropped position is counted under the first rule that drops
//! it, so the counts add up to the total dropped):
//!
//! 1. ply window: `min_ply <= ply <= max_ply`;
//! 2. score limit: `|score| <= max_score`;
//! 3. in check: the side to move is in check (the thesis's rule, with 4);
//! 4. capture: the best move captures (en passant included);
//! 5. random skip: each remaining position is dropped with probability `skip_rate`, from a
//!    seeded generator, so a run is reproducible;
//! 6. WDL skip: dropped unless a draw falls under the probability that the score gives the
//!    game's result (nnue-pytorch's; positions without a result are kept);
//! 7. soft early-ply skip: before `early_skip_ply`, kept with nnue-pytorch's probabilities;
//! 8. piece-count skip: kept with the probability that steers the piece counts toward
//!    nnue-pytorch's target distribution.
//!
//! Rules 6–8 are nnue-pytorch's skipping at load ([`super::skip`]); every random draw comes
//! from the filter's seeded stream.
//! The thesis trains on quiet positions only (rules 3 and 4): the data's scores come from a
//! quiescence search, which is meaningless for a position in check or with a pending capture.

use std::fmt;

use nnue::units::ScoreUnits;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::skip::{PieceCountSkip, early_ply_keep, wdl_keep};
use crate::data::Sample;
use crate::invalid_setting::InvalidSetting;

/// Which positions to drop. Stored in a run's configuration (checkpoints) without its seed,
/// which the run derives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FilterConfig {
    /// Drop positions whose side to move is in check.
    pub skip_in_check: bool,
    /// Drop positions whose best move is a capture.
    pub skip_capture: bool,
    /// Drop positions before this ply.
    pub min_ply: Option<u16>,
    /// Drop positions after this ply.
    pub max_ply: Option<u16>,
    /// Drop positions with `|score|` above this.
    pub max_score: Option<i32>,
    /// Probability of dropping any remaining position (0 = never).
    pub skip_rate: f64,
    /// nnue-pytorch's WDL skip (not written when off, so stored configurations stay as they
    /// were).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wdl_skip: bool,
    /// nnue-pytorch's soft early-ply skip, ending at this ply (its default is 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub early_skip_ply: Option<u16>,
    /// nnue-pytorch's piece-count ("smart") skip.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub piece_count_skip: bool,
    /// The units of the scores the WDL skip reads (the data's; centipawns, not written).
    #[serde(default, skip_serializing_if = "crate::checked::is_zero")]
    pub score_units: ScoreUnits,
    /// Seed of the random skipping.
    #[serde(skip)]
    pub seed: u64,
}

impl Default for FilterConfig {
    fn default() -> Self {
        FilterConfig {
            skip_in_check: false,
            skip_capture: false,
            min_ply: None,
            max_ply: None,
            max_score: None,
            skip_rate: 0.0,
            wdl_skip: false,
            early_skip_ply: None,
            piece_count_skip: false,
            score_units: ScoreUnits::Centipawns,
            seed: 0,
        }
    }
}

impl FilterConfig {
    /// The thesis's rule: drop positions in check and positions whose best move is a capture.
    pub fn quiet() -> Self {
        FilterConfig {
            skip_in_check: true,
            skip_capture: true,
            ..FilterConfig::default()
        }
    }

    /// The same rules without nnue-pytorch's skips (rules 6–8): what a validation set is
    /// scored on, whole, while the skips shape what is trained on.
    pub fn without_skips(&self) -> FilterConfig {
        FilterConfig {
            wdl_skip: false,
            early_skip_ply: None,
            piece_count_skip: false,
            ..self.clone()
        }
    }

    /// Checks the values (a skip rate in 0..=1, a non-empty ply window).
    pub fn check(&self) -> Result<(), InvalidSetting> {
        if !(0.0..=1.0).contains(&self.skip_rate) {
            return Err(format!("skip rate {} is not in 0..=1", self.skip_rate).into());
        }
        if let (Some(a), Some(b)) = (self.min_ply, self.max_ply)
            && a > b
        {
            return Err(format!("empty ply window {a}..={b}").into());
        }
        Ok(())
    }
}

/// What the rules dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FilterCounts {
    /// Positions offered.
    pub seen: u64,
    /// Positions kept.
    pub kept: u64,
    /// Dropped by the ply window.
    pub ply: u64,
    /// Dropped by the score limit.
    pub score: u64,
    /// Dropped because the side to move is in check.
    pub in_check: u64,
    /// Dropped because the best move is a capture.
    pub capture: u64,
    /// Dropped at random.
    pub random: u64,
    /// Dropped by the WDL skip.
    pub wdl: u64,
    /// Dropped by the soft early-ply skip.
    pub early_ply: u64,
    /// Dropped by the piece-count skip.
    pub piece_count: u64,
}

impl FilterCounts {
    /// Adds another count (from another worker).
    pub fn merge(&mut self, o: &FilterCounts) {
        self.seen += o.seen;
        self.kept += o.kept;
        self.ply += o.ply;
        self.score += o.score;
        self.in_check += o.in_check;
        self.capture += o.capture;
        self.random += o.random;
        self.wdl += o.wdl;
        self.early_ply += o.early_ply;
        self.piece_count += o.piece_count;
    }

    /// Positions dropped in all.
    pub fn dropped(&self) -> u64 {
        self.seen - self.kept
    }
}

impl FilterCounts {
    /// The shares dropped, in all and by rule (those that dropped nothing left out):
    /// `dropped 26.8% (in check 8.6%, best move captures 18.3%)`; for counts taken mid-stream,
    /// where the totals mean little.
    pub fn shares(&self) -> String {
        let share = |n: u64| 100.0 * n as f64 / self.seen.max(1) as f64;
        let parts: Vec<String> = self
            .by_rule()
            .into_iter()
            .filter(|&(_, n)| n > 0)
            .map(|(name, n)| format!("{name} {:.1}%", share(n)))
            .collect();
        format!(
            "dropped {:.1}% ({})",
            share(self.dropped()),
            parts.join(", ")
        )
    }

    /// Each rule's name and count, in the rules' order.
    fn by_rule(&self) -> [(&'static str, u64); 8] {
        [
            ("ply window", self.ply),
            ("score limit", self.score),
            ("in check", self.in_check),
            ("best move captures", self.capture),
            ("random skip", self.random),
            ("WDL skip", self.wdl),
            ("early-ply skip", self.early_ply),
            ("piece-count skip", self.piece_count),
        ]
    }
}

impl fmt::Display for FilterCounts {
    /// `filtered N of M: ply window A, score limit B, in check C, capture D, random E, ...`
    /// (rules that dropped nothing left out).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "filtered {} of {}", self.dropped(), self.seen)?;
        let parts: Vec<String> = self
            .by_rule()
            .into_iter()
            .filter(|&(_, n)| n > 0)
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        if !parts.is_empty() {
            write!(f, ": {}", parts.join(", "))?;
        }
        Ok(())
    }
}

/// A filter with its own random stream and counts; make one per worker.
#[derive(Clone, Debug)]
pub struct Filter {
    config: FilterConfig,
    rng: ChaCha8Rng,
    counts: FilterCounts,
    /// The piece-count skip's history (of this filter's positions).
    piece_counts: PieceCountSkip,
}

impl Filter {
    /// A filter whose random skips depend on the config's seed and on `stream` (give each
    /// worker or each piece of work its own number for reproducible parallel runs).
    pub fn new(config: &FilterConfig, stream: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        rng.set_stream(stream);
        Filter {
            config: config.clone(),
            rng,
            counts: FilterCounts::default(),
            piece_counts: PieceCountSkip::default(),
        }
    }

    /// Whether to keep `s`; counts the decision.
    #[inline]
    pub fn keep(&mut self, s: &Sample) -> bool {
        let c = &self.config;
        self.counts.seen += 1;
        let slot = if c.min_ply.is_some_and(|m| s.ply < m) || c.max_ply.is_some_and(|m| s.ply > m) {
            &mut self.counts.ply
        } else if c.max_score.is_some_and(|m| i32::from(s.score).abs() > m) {
            &mut self.counts.score
        } else if c.skip_in_check && s.in_check() {
            &mut self.counts.in_check
        } else if c.skip_capture && s.best_move_is_capture() {
            &mut self.counts.capture
        } else if c.skip_rate > 0.0 && self.rng.random::<f64>() < c.skip_rate {
            &mut self.counts.random
        } else if c.wdl_skip
            && let Some(result) = s.result
            && self.rng.random::<f64>() >= wdl_keep(s.score, s.ply, result, c.score_units)
        {
            &mut self.counts.wdl
        } else if c.early_skip_ply.is_some_and(|until| {
            s.ply < until && self.rng.random::<f64>() >= early_ply_keep(s.ply, until)
        }) {
            &mut self.counts.early_ply
        } else if c.piece_count_skip
            && self.rng.random::<f64>() >= self.piece_counts.keep(s.board.occupied().count_ones())
        {
            &mut self.counts.piece_count
        } else {
            self.counts.kept += 1;
            return true;
        };
        *slot += 1;
        false
    }

    /// What was decided so far.
    pub fn counts(&self) -> &FilterCounts {
        &self.counts
    }

    /// Returns the counts and starts new ones.
    pub fn take_counts(&mut self) -> FilterCounts {
        std::mem::take(&mut self.counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::sample::move_on_board;
    use crate::data::skip;
    use plugin_api::MoveKind;

    fn sample(fen: &str, ply: u16, score: i16) -> Sample {
        let mut s = Sample::from_fen(fen);
        s.score = score;
        s.ply = ply;
        s
    }

    #[test]
    fn each_rule_drops_and_counts() {
        let quiet = sample("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", 20, 10);
        let check = sample("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1", 20, 10);
        let mut capture = sample("4k3/8/8/8/8/8/4r3/R3K3 w - - 0 1", 20, 10);
        // Kxe2: in check and a capture.
        capture.best_move =
            Some(move_on_board(&capture.board, 4, 12, MoveKind::Normal, None).unwrap());
        let config = FilterConfig {
            min_ply: Some(10),
            max_ply: Some(100),
            max_score: Some(500),
            ..FilterConfig::quiet()
        };
        config.check().unwrap();
        let mut f = Filter::new(&config, 0);
        assert!(f.keep(&quiet));
        assert!(!f.keep(&check));
        assert!(!f.keep(&Sample { ply: 5, ..quiet }));
        assert!(!f.keep(&Sample { ply: 101, ..quiet }));
        assert!(!f.keep(&Sample {
            score: -501,
            ..quiet
        }));
        assert!(f.keep(&Sample {
            score: 500,
            ..quiet
        }));
        // In check and a capture: counted under the check rule, which comes first.
        assert!(!f.keep(&capture));
        let c = *f.counts();
        assert_eq!(
            c,
            FilterCounts {
                seen: 7,
                kept: 2,
                ply: 2,
                score: 1,
                in_check: 2,
                capture: 0,
                random: 0,
                ..FilterCounts::default()
            }
        );
        assert_eq!(
            c.to_string(),
            "filtered 5 of 7: ply window 2, score limit 1, in check 2"
        );
        let mut capture_only = quiet;
        capture_only.board = sample("r3k3/8/8/8/8/8/8/R3K3 w - - 0 1", 0, 0).board;
        capture_only.best_move =
            Some(move_on_board(&capture_only.board, 0, 56, MoveKind::Normal, None).unwrap());
        assert!(!f.keep(&capture_only));
        assert_eq!(f.counts().capture, 1);
    }

    #[test]
    fn nnue_pytorchs_skips_drop_at_their_rates_and_count() {
        let s = sample("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", 3, 10);
        let kept = |config: &FilterConfig, s: &Sample| {
            let mut f = Filter::new(config, 1);
            let n = (0..20_000).filter(|_| f.keep(s)).count();
            (n, *f.counts())
        };
        // Soft early-ply skip: ply 3 is kept with probability 0.125.
        let early = FilterConfig {
            early_skip_ply: Some(20),
            seed: 4,
            ..FilterConfig::default()
        };
        let (n, counts) = kept(&early, &s);
        assert!((2300..2700).contains(&n), "{n}");
        assert_eq!(counts.early_ply, 20_000 - n as u64);
        assert!(counts.to_string().contains("early-ply skip"), "{counts}");
        let share = 100.0 * counts.early_ply as f64 / 20_000.0;
        assert_eq!(
            counts.shares(),
            format!("dropped {share:.1}% (early-ply skip {share:.1}%)")
        );
        assert_eq!(kept(&early, &Sample { ply: 20, ..s }).0, 20_000);
        // WDL skip: a drawn game at +10 is kept with the model's draw probability; a position
        // without a result always.
        let wdl = FilterConfig {
            wdl_skip: true,
            seed: 4,
            ..FilterConfig::default()
        };
        let drawn = Sample {
            result: Some(0),
            ..s
        };
        let p = skip::wdl_keep(10, 3, 0, wdl.score_units);
        let (n, counts) = kept(&wdl, &drawn);
        assert!((n as f64 / 20_000.0 - p).abs() < 0.02, "{n} vs {p}");
        assert_eq!(counts.wdl, 20_000 - n as u64);
        assert_eq!(kept(&wdl, &Sample { result: None, ..s }).0, 20_000);
        // Piece-count skip: three pieces are rare in its target (0.4 at 8): most are dropped.
        let pieces = FilterConfig {
            piece_count_skip: true,
            seed: 4,
            ..FilterConfig::default()
        };
        let (n, counts) = kept(&pieces, &s);
        assert!(
            n < 20_000 && counts.piece_count == 20_000 - n as u64,
            "{counts}"
        );
    }

    #[test]
    fn random_skip_is_seeded_and_near_its_rate() {
        let s = sample("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", 20, 10);
        let config = FilterConfig {
            skip_rate: 0.25,
            seed: 9,
            ..FilterConfig::default()
        };
        let run = |stream| {
            let mut f = Filter::new(&config, stream);
            (0..10_000).map(|_| f.keep(&s)).collect::<Vec<bool>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
        let dropped = run(1).iter().filter(|k| !**k).count();
        assert!((2300..2700).contains(&dropped), "{dropped}");
        assert!(
            FilterConfig {
                skip_rate: 1.5,
                ..config.clone()
            }
            .check()
            .is_err()
        );
        assert!(
            FilterConfig {
                min_ply: Some(5),
                max_ply: Some(4),
                ..config
            }
            .check()
            .is_err()
        );
    }
}
