//! What defines a `gensfen` run: the target, the searches, the random moves, the write window,
//! the labeler and the output; defaults and checks.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::data::Format;

/// How much to generate (per run; see the module docs for shards).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Target {
    /// Play games `0..G` (of the shard's residue).
    Games(u64),
    /// Write this many positions (split over the shards), stopping inside the last game.
    Positions(u64),
}

/// Who plays and labels the games.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Labeler {
    /// The host's search (with `net`, else the built-in evaluation).
    Host,
    /// An external UCI engine, `arena::uci::EngineSpec` syntax (`cmd=PATH,option.NAME=VALUE`),
    /// searching `nodes` nodes per position. Deterministic only with one engine thread.
    Uci {
        /// The engine specification.
        spec: String,
        /// Nodes per search.
        nodes: u64,
    },
}

/// Everything that defines a `gensfen` run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GensfenConfig {
    /// How much to generate.
    pub target: Target,
    /// Smallest search depth (with `depth_max`, the depth of each search is drawn uniformly).
    pub depth_min: Option<u32>,
    /// Largest search depth.
    pub depth_max: Option<u32>,
    /// Node limit per search (with or without a depth).
    pub nodes: Option<u64>,
    /// Network for the host's search (`None`: the built-in evaluation).
    pub net: Option<PathBuf>,
    /// Where the feature plugins of `net` are (default: the usual plugin directories).
    pub plugin_dir: Option<PathBuf>,
    /// Worker threads (one game and one search thread each); does not change the output.
    pub threads: usize,
    /// The seed of every random choice.
    pub seed: u64,
    /// `(index, count)`: play the games whose number is `index` modulo `count`.
    pub shard: (u64, u64),
    /// EPD book: each game starts from a random line of it.
    pub book: Option<PathBuf>,
    /// Random moves per game.
    pub random_moves: u32,
    /// First ply that may be random; negative: the first `random_moves` plies are random.
    pub random_minply: i32,
    /// Last ply that may be random.
    pub random_maxply: u32,
    /// 0: a random move is any legal move; `M > 0`: one of the best `M` moves within
    /// `random_margin` of the best.
    pub random_multipv: u32,
    /// Score margin of the multi-PV choice (centipawns, side to move's view).
    pub random_margin: i32,
    /// Depth of the searches that rank the moves for the multi-PV choice.
    pub random_depth: u32,
    /// A game ends, adjudicated, when a search's `|score|` reaches this.
    pub eval_limit: i32,
    /// First game ply written.
    pub write_minply: u32,
    /// Last game ply written.
    pub write_maxply: u32,
    /// A game that reaches this ply ends as a draw.
    pub max_ply: u32,
    /// Who plays and labels.
    pub labeler: Labeler,
    /// Transposition table per worker, in MiB (changes the searches, hence the output).
    pub hash_mb: usize,
    /// Positions per committed batch (whole games).
    pub flush_every: u64,
    /// Output format (`None`: from the output's extension).
    #[serde(skip)]
    pub format: Option<Format>,
}

impl Default for GensfenConfig {
    /// Stockfish's defaults: depth 3, 5 random moves in plies 1..=24, eval limit 3000, plies
    /// 16..=400 written.
    fn default() -> Self {
        GensfenConfig {
            target: Target::Games(100),
            depth_min: None,
            depth_max: None,
            nodes: None,
            net: None,
            plugin_dir: None,
            threads: 1,
            seed: 0,
            shard: (0, 1),
            book: None,
            random_moves: 5,
            random_minply: 1,
            random_maxply: 24,
            random_multipv: 0,
            random_margin: 100,
            random_depth: 4,
            eval_limit: 3000,
            write_minply: 16,
            write_maxply: 400,
            max_ply: 400,
            labeler: Labeler::Host,
            hash_mb: 16,
            flush_every: 10_000,
            format: None,
        }
    }
}

/// Default depth when neither a depth nor a node limit is given (Stockfish's).
pub const DEFAULT_DEPTH: u32 = 3;

impl GensfenConfig {
    /// Checks the values; the error names the bad one.
    pub fn check(&self) -> Result<(), String> {
        let (i, n) = self.shard;
        if n == 0 || i >= n {
            return Err(format!(
                "invalid shard {i}/{n}: the index must be below the count (0/1 .. {}/{})",
                n.max(1) - 1,
                n.max(1)
            ));
        }
        match self.target {
            Target::Games(0) | Target::Positions(0) => {
                return Err("the target (games or positions) must be at least 1".into());
            }
            _ => {}
        }
        if let (Some(a), Some(b)) = (self.depth_min, self.depth_max)
            && a > b
        {
            return Err(format!("depth range {a}..{b} is empty"));
        }
        if self.depth_min == Some(0) || self.depth_max == Some(0) {
            return Err("search depth must be at least 1".into());
        }
        if self.nodes == Some(0) {
            return Err("node limit must be at least 1".into());
        }
        if self.threads == 0 {
            return Err("threads must be at least 1".into());
        }
        if self.random_minply >= 0 && self.random_minply as u32 > self.random_maxply {
            return Err(format!(
                "random move window {}..{} is empty",
                self.random_minply, self.random_maxply
            ));
        }
        if self.random_multipv > 0 && self.random_depth == 0 {
            return Err("random multi-PV depth must be at least 1".into());
        }
        if self.random_margin < 0 {
            return Err("random move margin must not be negative".into());
        }
        if self.eval_limit <= 0 {
            return Err("eval limit must be positive".into());
        }
        if self.write_minply > self.write_maxply {
            return Err(format!(
                "write ply window {}..{} is empty",
                self.write_minply, self.write_maxply
            ));
        }
        if self.max_ply == 0 {
            return Err("max ply must be at least 1".into());
        }
        if self.flush_every == 0 {
            return Err("flush-every must be at least 1".into());
        }
        if let Labeler::Uci { spec, nodes } = &self.labeler {
            if spec.trim().is_empty() {
                return Err("empty UCI engine specification".into());
            }
            if *nodes == 0 {
                return Err("label node limit must be at least 1".into());
            }
        }
        Ok(())
    }

    /// The depth range of the host's searches (`None`: node limit only).
    pub(super) fn depths(&self) -> Option<(u32, u32)> {
        match (self.depth_min, self.depth_max) {
            (Some(a), Some(b)) => Some((a, b)),
            (Some(a), None) | (None, Some(a)) => Some((a, a)),
            (None, None) if self.nodes.is_none() => Some((DEFAULT_DEPTH, DEFAULT_DEPTH)),
            (None, None) => None,
        }
    }

    /// The number of games of this shard with a game target.
    pub(super) fn shard_games(&self) -> Option<u64> {
        let (i, n) = self.shard;
        match self.target {
            Target::Games(g) if i < g => Some((g - i).div_ceil(n)),
            Target::Games(_) => Some(0),
            Target::Positions(_) => None,
        }
    }

    /// The positions this shard writes with a position target.
    pub(super) fn shard_positions(&self) -> Option<u64> {
        let (i, n) = self.shard;
        match self.target {
            Target::Positions(p) => Some(p / n + u64::from(i < p % n)),
            Target::Games(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_targets_add_up() {
        for total in [1u64, 7, 100, 101] {
            for n in 1..5u64 {
                let sum_g: u64 = (0..n)
                    .map(|i| {
                        GensfenConfig {
                            target: Target::Games(total),
                            shard: (i, n),
                            ..GensfenConfig::default()
                        }
                        .shard_games()
                        .unwrap()
                    })
                    .sum();
                let sum_p: u64 = (0..n)
                    .map(|i| {
                        GensfenConfig {
                            target: Target::Positions(total),
                            shard: (i, n),
                            ..GensfenConfig::default()
                        }
                        .shard_positions()
                        .unwrap()
                    })
                    .sum();
                assert_eq!((sum_g, sum_p), (total, total), "{total} over {n}");
            }
        }
    }

    #[test]
    fn bad_values_are_named() {
        let c = GensfenConfig {
            shard: (3, 2),
            ..GensfenConfig::default()
        };
        assert!(c.check().unwrap_err().contains("shard 3/2"));
        let c = GensfenConfig {
            write_minply: 10,
            write_maxply: 5,
            ..GensfenConfig::default()
        };
        assert!(c.check().unwrap_err().contains("write ply"));
    }
}
