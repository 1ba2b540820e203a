//! What defines a `gensfen` run: the target, the searches, the random moves, the write window,
//! the labeler and the output; defaults and checks.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

use host::engine::label::LabelBudget;
use host::engine::search::MAX_PLY;

use crate::checked::Positive;
use crate::data::Format;
use crate::invalid_setting::InvalidSetting;

/// How much to generate (per run; see the module docs for shards): `games` or `positions`, as
/// the command line and a manifest's `generate` table both name it (serialized as that one
/// key, `{"games": 1600}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// Play games `0..G` (of the shard's residue).
    Games(u64),
    /// Write this many positions (split over the shards), stopping inside the last game.
    Positions(u64),
}

impl Target {
    /// The target of exactly one of `games` and `positions`: the one rule of `trainer gensfen
    /// --games/--positions` and a manifest's `generate` table.
    pub fn of(games: Option<u64>, positions: Option<u64>) -> Result<Target, InvalidSetting> {
        match (games, positions) {
            (Some(g), None) => Ok(Target::Games(g)),
            (None, Some(p)) => Ok(Target::Positions(p)),
            _ => Err("give exactly one of games and positions".into()),
        }
    }
}

impl std::fmt::Display for Target {
    /// `1600 games`, `37000 positions`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Games(g) => write!(f, "{g} games"),
            Target::Positions(p) => write!(f, "{p} positions"),
        }
    }
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
    /// Who plays, from where, and how long each move is searched.
    #[serde(flatten)]
    pub player: PlayerSettings,
    /// Where the feature plugins of the player's network are (default: the usual plugin
    /// directories).
    pub plugin_dir: Option<PathBuf>,
    /// Worker threads (one game and one search thread each; 0: one per core); does not change
    /// the output.
    pub threads: usize,
    /// The seed of every random choice.
    pub seed: u64,
    /// `(index, count)`: play the games whose number is `index` modulo `count`.
    pub shard: (u64, u64),
    /// How games are played and written.
    #[serde(flatten)]
    pub game: SelfPlaySettings,
    /// Who scores the written positions, if not the player's own search.
    #[serde(flatten)]
    pub label: LabelSettings,
    /// Output format (`None`: from the output's extension).
    #[serde(skip)]
    pub format: Option<Format>,
}

impl Default for GensfenConfig {
    /// Stockfish's defaults: depth 3 (see [`DEFAULT_DEPTH`]) and the games of
    /// [`SelfPlaySettings::default`].
    fn default() -> Self {
        GensfenConfig {
            target: Target::Games(100),
            player: PlayerSettings::default(),
            plugin_dir: None,
            threads: 1,
            seed: 0,
            shard: (0, 1),
            game: SelfPlaySettings::default(),
            label: LabelSettings::default(),
            format: None,
        }
    }
}

/// Who plays the games, from where, and how long each move is searched: declared once for
/// `trainer gensfen` (flattened into the command) and a manifest's `generate` table (its keys),
/// with one rule for the depth and the node limit and one for an external player's nodes.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlayerSettings {
    /// Node limit per move: of the host's search (alone, or with a depth), or of the external
    /// engine of `labeler`, which requires it.
    #[arg(long, value_name = "N", alias = "label-nodes")]
    pub nodes: Option<Positive>,
    /// Fixed search depth (depth 3 when no node limit is given either, Stockfish's).
    #[arg(long, value_name = "D", conflicts_with_all = ["depth_min", "depth_max"])]
    pub depth: Option<Positive>,
    /// Smallest search depth; each search draws its depth from depth_min..=depth_max.
    #[arg(long, value_name = "D", requires = "depth_max")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth_min: Option<Positive>,
    /// Largest search depth.
    #[arg(long, value_name = "D", requires = "depth_min")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth_max: Option<Positive>,
    /// Network of the host's search (default: the built-in evaluation).
    #[arg(long, value_name = "FILE")]
    pub net: Option<PathBuf>,
    /// EPD book: each game starts from a random line of it.
    #[arg(long, value_name = "FILE")]
    pub book: Option<PathBuf>,
    /// Play (and, without a label budget, label) with an external UCI engine instead of the
    /// host's search, `nodes` per move (`cmd=/usr/games/stockfish,option.Threads=1` or a path
    /// to the executable; deterministic only with one engine thread).
    #[arg(long, value_name = "SPEC", requires = "nodes")]
    pub labeler: Option<String>,
}

impl PlayerSettings {
    /// Checks what the types do not: one depth rule and an external player's node limit.
    pub fn check(&self) -> Result<(), InvalidSetting> {
        if self.depth.is_some() && (self.depth_min.is_some() || self.depth_max.is_some()) {
            return Err("depth: give a fixed depth or depth_min and depth_max, not both".into());
        }
        if self.depth_min.is_some() != self.depth_max.is_some() {
            return Err("depth_min: a depth range needs both depth_min and depth_max".into());
        }
        if let (Some(a), Some(b)) = (self.depth_min, self.depth_max)
            && a > b
        {
            return Err(format!("depth_min: the depth range {a}..={b} is empty").into());
        }
        for d in [self.depth, self.depth_max].into_iter().flatten() {
            if d.get() >= MAX_PLY as u64 {
                return Err(
                    format!("depth: {d} is beyond the search's {} plies", MAX_PLY - 1).into(),
                );
            }
        }
        match &self.labeler {
            Some(spec) if spec.trim().is_empty() => {
                Err("labeler: empty UCI engine specification".into())
            }
            Some(_) if self.nodes.is_none() => {
                Err("labeler: an external labeler searches a node count: give nodes".into())
            }
            _ => Ok(()),
        }
    }

    /// The depth range of the host's searches (`None`: the node limit alone).
    pub fn depths(&self) -> Option<(u32, u32)> {
        // check() bounds every depth below MAX_PLY.
        let depth = |d: Positive| d.get() as u32;
        match (self.depth, self.depth_min, self.depth_max) {
            (Some(d), _, _) => Some((depth(d), depth(d))),
            (None, Some(a), Some(b)) => Some((depth(a), depth(b))),
            _ if self.nodes.is_none() => Some((DEFAULT_DEPTH, DEFAULT_DEPTH)),
            _ => None,
        }
    }

    /// Who plays: the host, or the external engine searching `nodes` per move.
    pub fn engine(&self) -> Labeler {
        match (&self.labeler, self.nodes) {
            (Some(spec), Some(nodes)) => Labeler::Uci {
                spec: spec.clone(),
                nodes: nodes.get(),
            },
            _ => Labeler::Host,
        }
    }
}

/// The labeller, set apart from the player: the player's games decide which positions are
/// written, the labeller's budget (with its own network) scores them. Declared once for
/// `trainer gensfen` (flattened into the command), a manifest's `generate` table (the keys
/// `label` and `label_net`) and the resume record.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LabelSettings {
    /// Score the written positions with the host's engine under this budget instead of the
    /// player's search: static, qsearch, nodes=N or depth=D.
    #[arg(long = "label", value_name = "BUDGET", value_parser = parse_budget)]
    #[serde(
        rename = "label",
        with = "budget_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub budget: Option<LabelBudget>,
    /// The labeller's network (any the host loads, Stockfish 15.1's `.nnue` included; default:
    /// the player's, else the built-in evaluation).
    #[arg(
        id = "label_net",
        long = "label-net",
        value_name = "FILE",
        requires = "budget"
    )]
    #[serde(rename = "label_net", skip_serializing_if = "Option::is_none")]
    pub net: Option<PathBuf>,
}

/// Parses a label budget for the command line.
fn parse_budget(text: &str) -> Result<LabelBudget, String> {
    text.parse()
}

/// A label budget as its text (`qsearch`, `nodes=5000`) in the configuration's JSON and TOML.
mod budget_text {
    use host::engine::label::LabelBudget;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &Option<LabelBudget>, s: S) -> Result<S::Ok, S::Error> {
        match b {
            Some(b) => s.collect_str(b),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<LabelBudget>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|t| t.parse().map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// How the games of a run are played and written: declared once, with Stockfish's defaults,
/// for `trainer gensfen` (the struct is flattened into the command), a manifest's
/// `generate = { ... }` table (its keys) and the resume record (the same names).
#[derive(Args, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SelfPlaySettings {
    /// Random moves per game.
    #[arg(long, value_name = "K", default_value_t = SelfPlaySettings::default().random_moves)]
    pub random_moves: u32,
    /// First ply that may be random; negative (-1): the first K plies are random.
    #[arg(
        long,
        value_name = "PLY",
        default_value_t = SelfPlaySettings::default().random_minply,
        allow_negative_numbers = true
    )]
    pub random_minply: i32,
    /// Last ply that may be random.
    #[arg(long, value_name = "PLY", default_value_t = SelfPlaySettings::default().random_maxply)]
    pub random_maxply: u32,
    /// 0: random moves are any legal move; M: one of the best M moves (by a shallow search)
    /// within --random-margin of the best.
    #[arg(long, value_name = "M", default_value_t = SelfPlaySettings::default().random_multipv)]
    pub random_multipv: u32,
    /// Score margin of the multi-PV random choice, centipawns (side to move's view).
    #[arg(long, value_name = "CP", default_value_t = SelfPlaySettings::default().random_margin)]
    pub random_margin: i32,
    /// Depth of the searches ranking moves for the multi-PV random choice.
    #[arg(long, value_name = "D", default_value_t = SelfPlaySettings::default().random_depth)]
    pub random_depth: u32,
    /// End a game when a search's |score| reaches this (won by the side it favours).
    #[arg(long, value_name = "CP", default_value_t = SelfPlaySettings::default().eval_limit)]
    pub eval_limit: i32,
    /// First game ply written.
    #[arg(long, value_name = "PLY", default_value_t = SelfPlaySettings::default().write_minply)]
    pub write_minply: u32,
    /// Last game ply written.
    #[arg(long, value_name = "PLY", default_value_t = SelfPlaySettings::default().write_maxply)]
    pub write_maxply: u32,
    /// A game reaching this ply ends as a draw.
    #[arg(long, value_name = "PLY", default_value_t = SelfPlaySettings::default().max_ply)]
    pub max_ply: u32,
    /// Transposition table per worker, MiB (part of the configuration: it changes the searches).
    #[arg(
        long = "hash",
        value_name = "MB",
        default_value_t = SelfPlaySettings::default().hash_mb
    )]
    pub hash_mb: usize,
    /// Positions per committed batch of whole games (what an interruption can lose at most).
    #[arg(long, value_name = "N", default_value_t = SelfPlaySettings::default().flush_every)]
    pub flush_every: u64,
    /// Write only quiet positions, the thesis's filter: the side to move not in check and the
    /// player's best move not a capture (the others are neither labelled nor written).
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skip_noisy: bool,
    /// Drop positions written before (by Zobrist key), Stockfish's `gensfen` way: a table of
    /// this many MiB of keys, one slot per key modulo its size (0: keep duplicates).
    #[arg(long, value_name = "MB", default_value_t = SelfPlaySettings::default().dedup_mb)]
    #[serde(skip_serializing_if = "crate::checked::is_zero")]
    pub dedup_mb: usize,
}

impl Default for SelfPlaySettings {
    /// Stockfish's: 5 random moves in plies 1..=24, eval limit 3000, plies 16..=400 written.
    fn default() -> Self {
        SelfPlaySettings {
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
            hash_mb: 16,
            flush_every: 10_000,
            skip_noisy: false,
            dedup_mb: 0,
        }
    }
}

impl SelfPlaySettings {
    /// Checks the values; the error starts with the key it is about.
    pub fn check(&self) -> Result<(), InvalidSetting> {
        if self.random_minply >= 0 && self.random_minply as u32 > self.random_maxply {
            return Err(format!(
                "random_minply: {} is after random_maxply {}: the random move window is empty",
                self.random_minply, self.random_maxply
            )
            .into());
        }
        if self.random_multipv > 0 && self.random_depth == 0 {
            return Err("random_depth: the multi-PV searches need a depth of at least 1".into());
        }
        if self.random_margin < 0 {
            return Err("random_margin: must not be negative".into());
        }
        if self.eval_limit <= 0 {
            return Err("eval_limit: must be positive".into());
        }
        if self.write_minply > self.write_maxply {
            return Err(format!(
                "write_minply: {} is after write_maxply {}: the write ply window is empty",
                self.write_minply, self.write_maxply
            )
            .into());
        }
        if self.max_ply == 0 {
            return Err("max_ply: must be at least 1".into());
        }
        if self.hash_mb == 0 {
            return Err("hash_mb: the transposition table needs at least 1 MiB".into());
        }
        if self.flush_every == 0 {
            return Err("flush_every: must be at least 1".into());
        }
        if self.dedup_mb > MAX_DEDUP_MB {
            return Err(format!(
                "dedup_mb: {} MiB is more than the {MAX_DEDUP_MB} MiB a key table may take",
                self.dedup_mb
            )
            .into());
        }
        Ok(())
    }
}

/// The largest key table of `dedup_mb` (Stockfish's `gensfen` kept 64 Mi keys, 512 MiB).
pub const MAX_DEDUP_MB: usize = 16 << 10;

/// Default depth when neither a depth nor a node limit is given (Stockfish's).
pub const DEFAULT_DEPTH: u32 = 3;

impl GensfenConfig {
    /// Checks the values; the error names the bad one.
    pub fn check(&self) -> Result<(), InvalidSetting> {
        let (i, n) = self.shard;
        if n == 0 || i >= n {
            return Err(format!(
                "invalid shard {i}/{n}: the index must be below the count (0/1 .. {}/{})",
                n.max(1) - 1,
                n.max(1)
            )
            .into());
        }
        match self.target {
            Target::Games(0) | Target::Positions(0) => {
                return Err("the target (games or positions) must be at least 1".into());
            }
            _ => {}
        }
        self.player.check()?;
        self.game.check()?;
        if self.label.net.is_some() && self.label.budget.is_none() {
            return Err("label_net: a labeller network needs a label budget (label)".into());
        }
        Ok(())
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
        assert!(c.check().unwrap_err().0.contains("shard 3/2"));
        let c = GensfenConfig {
            game: SelfPlaySettings {
                write_minply: 10,
                write_maxply: 5,
                ..SelfPlaySettings::default()
            },
            ..GensfenConfig::default()
        };
        assert!(c.check().unwrap_err().0.contains("write ply"));
    }
}
