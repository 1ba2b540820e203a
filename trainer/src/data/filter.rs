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
//!    seeded generator, so a run is reproducible.
//!
//! The thesis trains on quiet positions only (rules 3 and 4): the data's scores come from a
//! quiescence search, which is meaningless for a position in check or with a pending capture.

use std::fmt;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

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
    }

    /// Positions dropped in all.
    pub fn dropped(&self) -> u64 {
        self.seen - self.kept
    }
}

impl fmt::Display for FilterCounts {
    /// `filtered N of M: ply window A, score limit B, in check C, capture D, random E` (rules
    /// that dropped nothing left out).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "filtered {} of {}", self.dropped(), self.seen)?;
        let parts: Vec<String> = [
            ("ply window", self.ply),
            ("score limit", self.score),
            ("in check", self.in_check),
            ("best move captures", self.capture),
            ("random skip", self.random),
        ]
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
                random: 0
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
