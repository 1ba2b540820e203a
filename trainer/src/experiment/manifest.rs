//! The experiment manifest (`experiments.toml`): shared defaults, named datasets, named
//! evaluations and a list of experiments.
//!
//! Parsing is strict: an unknown key, a value of the wrong type or out of range, a dataset or
//! evaluation that is not defined, or a missing file is an error of one line naming the file,
//! the line and the key. Relative paths are relative to the manifest's folder.

use host::nnue::{MAX_L1, MAX_L2};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// Where in the manifest a value came from: its file and 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The manifest file.
    pub file: PathBuf,
    /// The line, 1-based.
    pub line: usize,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// A positive integer (the widths, sizes and counts of the manifest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Positive(pub u64);

impl<'de> Deserialize<'de> for Positive {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(d)?;
        if v <= 0 {
            return Err(de::Error::custom(format!(
                "must be a positive integer, not {v}"
            )));
        }
        Ok(Positive(v as u64))
    }
}

/// A first-layer width: a positive multiple of 32 (the inference kernels' block).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct L1Width(pub u64);

impl<'de> Deserialize<'de> for L1Width {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(d)?;
        if v <= 0 || v % 32 != 0 || v as u64 > MAX_L1 as u64 {
            return Err(de::Error::custom(format!(
                "l1 must be a positive multiple of 32 up to {MAX_L1}, not {v}"
            )));
        }
        Ok(L1Width(v as u64))
    }
}

/// A positive count with an upper bound that keeps a typo from asking for centuries of work
/// or an allocation beyond any machine (epochs, batch sizes, positions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Count<const MAX: u64>(pub u64);

impl<'de, const MAX: u64> Deserialize<'de> for Count<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(d)?;
        if v <= 0 || v as u64 > MAX {
            return Err(de::Error::custom(format!(
                "must be between 1 and {MAX}, not {v}"
            )));
        }
        Ok(Count(v as u64))
    }
}

/// The most positions in one batch.
pub const MAX_BATCH_SIZE: u64 = 1 << 22;
/// The most epochs of a run.
pub const MAX_EPOCHS: u64 = 1 << 20;
/// The most positions of an epoch or of the validation set.
pub const MAX_POSITIONS: u64 = 1 << 40;

/// A number above 0 and at most 1: a learning rate (Adam's steps are about `lr` per weight;
/// beyond 1 every weight would leave the quantized range in one step) or a decay factor per
/// epoch (0 would stop learning after the first epoch).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct PositiveFraction(pub f64);

impl<'de> Deserialize<'de> for PositiveFraction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        if !(v > 0.0 && v <= 1.0) {
            return Err(de::Error::custom(format!(
                "must be between 0 and 1 (above 0, at most 1), not {v}"
            )));
        }
        Ok(PositiveFraction(v))
    }
}

/// A finite number strictly above zero (learning rates, scales).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct PositiveReal(pub f64);

impl<'de> Deserialize<'de> for PositiveReal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        if !(v.is_finite() && v > 0.0) {
            return Err(de::Error::custom(format!(
                "must be a number above 0, not {v}"
            )));
        }
        Ok(PositiveReal(v))
    }
}

/// A number in `0..=1` (gamma, lambda, skip rates).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct UnitReal(pub f64);

impl<'de> Deserialize<'de> for UnitReal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        if !(0.0..=1.0).contains(&v) {
            return Err(de::Error::custom(format!(
                "must be between 0 and 1, not {v}"
            )));
        }
        Ok(UnitReal(v))
    }
}

/// The training method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MethodName {
    /// Score targets (thesis §5.2).
    Score,
    /// PQR triplets (thesis §5.3).
    Pqr,
}

/// The optimizer (the thesis used Adam only; the key exists so manifests say so).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerName {
    /// Adam with the thesis's betas.
    Adam,
}

/// Declares the training settings twice: once for `[defaults]` and once inside each
/// `[[experiment]]`, both strict about unknown keys (serde cannot flatten and deny unknown
/// fields at once).
macro_rules! settings {
    ($(#[$meta:meta])* $name:ident { $($extra:tt)* }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($extra)*
            /// First-layer width per perspective (multiple of 32).
            pub l1: Option<L1Width>,
            /// Hidden width.
            pub l2: Option<Count<{ MAX_L2 as u64 }>>,
            /// Training method.
            pub method: Option<MethodName>,
            /// Optimizer (only "adam").
            pub optimizer: Option<OptimizerName>,
            /// Adam's learning rate in the first epoch.
            pub lr: Option<PositiveFraction>,
            /// Learning-rate factor per epoch.
            pub gamma: Option<PositiveFraction>,
            /// Positions per optimizer step.
            pub batch_size: Option<Count<MAX_BATCH_SIZE>>,
            /// Epochs per run.
            pub epochs: Option<Count<MAX_EPOCHS>>,
            /// Positions per epoch.
            pub epoch_positions: Option<Count<MAX_POSITIONS>>,
            /// Repeated runs of each feature set (different seeds).
            pub runs: Option<Positive>,
            /// Base seed of the runs (run k uses seed + k - 1).
            pub seed: Option<u64>,
            /// Validation positions, from the dataset's validation files.
            pub val_positions: Option<Count<MAX_POSITIONS>>,
            /// Skip positions whose side to move is in check.
            pub skip_in_check: Option<bool>,
            /// Skip positions whose best move is a capture (the thesis's rule).
            pub skip_capture_bestmove: Option<bool>,
            /// Skip positions before this ply.
            pub min_ply: Option<u16>,
            /// Skip positions after this ply.
            pub max_ply: Option<u16>,
            /// Skip positions with |score| above this.
            pub max_score: Option<Positive>,
            /// Probability of skipping any other position.
            pub skip_rate: Option<UnitReal>,
            /// Exponent of the score loss.
            pub power: Option<PositiveReal>,
            /// Weight of the score against the game result in the target.
            pub lambda: Option<UnitReal>,
            /// Target win-rate scale sigma(score / S).
            pub target_scale: Option<PositiveReal>,
            /// Output win-rate scale sigma(output / S).
            pub output_scale: Option<PositiveReal>,
            /// A fitted win-rate model [a, b] for target and output alike.
            pub wdl: Option<[f64; 2]>,
            /// Start each run from the final network of the same feature set and run number in
            /// this experiment (the thesis's PQR-from-checkpoint experiment).
            pub init_from: Option<Spanned<String>>,
            /// The dataset (a `[data.NAME]` table).
            pub data: Option<Spanned<String>>,
            /// The evaluation (an `[evaluation.NAME]` table).
            pub evaluation: Option<Spanned<String>>,
        }
    };
}

settings!(
    /// `[defaults]`: settings every experiment inherits unless it sets them itself.
    #[derive(Default)]
    Defaults {}
);

settings!(
    /// One `[[experiment]]`: a name, feature sets, and settings over the defaults.
    ExperimentTable {
        /// The experiment's name (unique; `--only` selects by it).
        pub name: Spanned<String>,
        /// Feature sets, blocks joined by '+'.
        pub feature_sets: Vec<Spanned<String>>,
    }
);

/// `[data.NAME]`: files, or a self-play generation.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataTable {
    /// Training files (format from the extension).
    #[serde(default)]
    pub train: Vec<Spanned<String>>,
    /// Validation files (held out).
    #[serde(default)]
    pub val: Vec<Spanned<String>>,
    /// Generate the data by self-play instead of naming files.
    pub generate: Option<GenerateTable>,
}

/// `generate = { ... }` of a dataset: `trainer gensfen`'s settings.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GenerateTable {
    /// Games of training data.
    pub games: Positive,
    /// Games of validation data (generated with another seed).
    pub val_games: Positive,
    /// Node limit per move of the labelling search.
    pub nodes: Option<Positive>,
    /// Depth limit per move of the labelling search.
    pub depth: Option<Positive>,
    /// Network of the self-play engine (default: the built-in evaluation).
    pub net: Option<String>,
    /// Opening book (EPD), a random line per game.
    pub book: Option<String>,
    /// Random moves per game.
    pub random_moves: Option<u32>,
    /// First ply of the random moves.
    pub random_minply: Option<u32>,
    /// Last ply of the random moves.
    pub random_maxply: Option<u32>,
    /// Stop a game when |score| reaches this.
    pub eval_limit: Option<Positive>,
    /// First ply written.
    pub write_minply: Option<u32>,
    /// Last ply written.
    pub write_maxply: Option<u32>,
    /// An external UCI engine that plays and labels instead of `host` (`arena` engine spec).
    pub labeler: Option<String>,
    /// Seed.
    #[serde(default)]
    pub seed: u64,
    /// Threads (0: one per core).
    #[serde(default)]
    pub threads: u32,
}

/// How moves are limited in games and puzzles: exactly one of the keys.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LimitTable {
    /// Nodes per move.
    pub nodes: Option<Positive>,
    /// Depth per move.
    pub depth: Option<Positive>,
    /// Milliseconds per move.
    pub movetime: Option<Positive>,
    /// Time control `base+increment` in seconds (games only).
    pub tc: Option<String>,
}

/// `tournament = { ... }` of an evaluation.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TournamentTable {
    /// Game pairs (each opening with both colours) per pairing of players.
    pub rounds: Positive,
    /// Openings (EPD or FEN per line).
    pub openings: String,
    /// Parallel games.
    #[serde(default = "one")]
    pub concurrency: Positive,
    /// Hash of every engine, MiB.
    #[serde(default = "sixteen")]
    pub hash: Positive,
    /// Extra players: network files or engine specs (`name=..,cmd=..,option.X=..`).
    #[serde(default)]
    pub players: Vec<String>,
    /// Seed of the opening order.
    #[serde(default)]
    pub seed: u64,
    /// Nodes per move.
    pub nodes: Option<Positive>,
    /// Depth per move.
    pub depth: Option<Positive>,
    /// Milliseconds per move.
    pub movetime: Option<Positive>,
    /// Time control `base+increment` in seconds.
    pub tc: Option<String>,
}

impl TournamentTable {
    /// The move limit keys.
    pub fn limit(&self) -> LimitTable {
        LimitTable {
            nodes: self.nodes,
            depth: self.depth,
            movetime: self.movetime,
            tc: self.tc.clone(),
        }
    }
}

fn one() -> Positive {
    Positive(1)
}

fn sixteen() -> Positive {
    Positive(16)
}

/// `puzzles = { ... }` of an evaluation.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PuzzlesTable {
    /// The puzzle file (`FEN,moves,rating,themes`).
    pub file: String,
    /// The first this-many puzzles (default: all).
    pub count: Option<Positive>,
    /// Parallel engines.
    #[serde(default = "one")]
    pub threads: Positive,
    /// Nodes per move.
    pub nodes: Option<Positive>,
    /// Depth per move.
    pub depth: Option<Positive>,
    /// Milliseconds per move.
    pub movetime: Option<Positive>,
}

impl PuzzlesTable {
    /// The move limit keys.
    pub fn limit(&self) -> LimitTable {
        LimitTable {
            nodes: self.nodes,
            depth: self.depth,
            movetime: self.movetime,
            tc: None,
        }
    }
}

/// `[evaluation.NAME]`: a tournament and/or puzzles.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvaluationTable {
    /// The feature set (or extra player) whose rating is 0; default: the first feature set.
    pub reference: Option<String>,
    /// The tournament between the experiment's networks.
    pub tournament: Option<Spanned<TournamentTable>>,
    /// Puzzle accuracy of each network.
    pub puzzles: Option<Spanned<PuzzlesTable>>,
}

/// The whole file as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    #[serde(default)]
    defaults: Defaults,
    #[serde(default)]
    data: BTreeMap<String, DataTable>,
    #[serde(default)]
    evaluation: BTreeMap<String, EvaluationTable>,
    #[serde(default)]
    experiment: Vec<ExperimentTable>,
}

/// Training settings of an experiment after the defaults are applied.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Settings {
    /// First-layer width.
    pub l1: u64,
    /// Hidden width.
    pub l2: u64,
    /// Training method.
    pub method: MethodName,
    /// Learning rate.
    pub lr: f64,
    /// Learning-rate factor per epoch.
    pub gamma: f64,
    /// Batch size.
    pub batch_size: u64,
    /// Epochs per run.
    pub epochs: u64,
    /// Positions per epoch.
    pub epoch_positions: u64,
    /// Runs per feature set.
    pub runs: u64,
    /// Base seed.
    pub seed: u64,
    /// Validation positions.
    pub val_positions: u64,
    /// Skip positions in check.
    pub skip_in_check: bool,
    /// Skip positions whose best move is a capture.
    pub skip_capture_bestmove: bool,
    /// Ply window.
    pub min_ply: Option<u16>,
    /// Ply window.
    pub max_ply: Option<u16>,
    /// Score limit.
    pub max_score: Option<u64>,
    /// Random skip rate.
    pub skip_rate: f64,
    /// Loss exponent.
    pub power: f64,
    /// Score weight in the target.
    pub lambda: f64,
    /// Target scale.
    pub target_scale: f64,
    /// Output scale.
    pub output_scale: f64,
    /// Fitted win-rate model.
    pub wdl: Option<[f64; 2]>,
}

/// A dataset after validation: files, or a generation spec.
#[derive(Clone, Debug, PartialEq)]
pub enum DataSource {
    /// Existing files.
    Files {
        /// Training files.
        train: Vec<PathBuf>,
        /// Validation files.
        val: Vec<PathBuf>,
    },
    /// Self-play generation (paths inside resolved against the manifest's folder).
    Generate(GenerateTable),
}

/// A named dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// Its name in the manifest.
    pub name: String,
    /// Where the positions come from.
    pub source: DataSource,
}

/// A named evaluation after validation (paths resolved).
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Its name in the manifest.
    pub name: String,
    /// The reference player.
    pub reference: Option<String>,
    /// The tournament.
    pub tournament: Option<TournamentTable>,
    /// The puzzles.
    pub puzzles: Option<PuzzlesTable>,
}

/// One experiment, ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Experiment {
    /// Name.
    pub name: String,
    /// Feature sets, in the manifest's order.
    pub feature_sets: Vec<String>,
    /// Where each feature set is written (for errors found later, e.g. an unknown block).
    pub feature_set_places: Vec<Place>,
    /// Training settings.
    pub settings: Settings,
    /// The dataset.
    pub data: Dataset,
    /// The evaluation, if any.
    pub evaluation: Option<Evaluation>,
    /// Experiment whose final networks initialize this one's runs.
    pub init_from: Option<String>,
}

/// A parsed, validated manifest.
#[derive(Clone, Debug)]
pub struct Manifest {
    /// The file it was read from.
    pub path: PathBuf,
    /// Experiments in file order.
    pub experiments: Vec<Experiment>,
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl Manifest {
    /// Reads and validates a manifest file.
    pub fn load(path: &Path) -> Result<Manifest, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Manifest::parse(&text, path)
    }

    /// Parses and validates manifest text; `path` names it in errors and anchors relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest, String> {
        let file: ManifestFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(0, |s| line_of(text, s.start));
            let message = e.message().trim().replace('\n', " ");
            // A value's error (out of range, wrong type) does not say whose value it is: name
            // the key written on that line.
            let key = text
                .lines()
                .nth(line.saturating_sub(1))
                .and_then(|l| l.split_once('='))
                .map(|(k, _)| k.trim())
                .filter(|k| !k.is_empty() && !k.starts_with('[') && !message.contains(*k));
            match key {
                Some(k) => format!("{}:{line}: {k}: {message}", path.display()),
                None => format!("{}:{line}: {message}", path.display()),
            }
        })?;
        let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
        let place = |offset: usize| Place {
            file: path.to_path_buf(),
            line: line_of(text, offset),
        };
        let resolve = |p: &str| -> PathBuf {
            let p = Path::new(p);
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                base.join(p)
            }
        };
        // A path resolved against the manifest's folder, which must exist; `at` is the place
        // the error names.
        let existing = |p: &str, at: &dyn fmt::Display, key: &str| -> Result<PathBuf, String> {
            let full = resolve(p);
            if !full.exists() {
                return Err(format!("{at}: {key}: no such file {}", full.display()));
            }
            Ok(full)
        };
        let must_exist = |p: &Spanned<String>, key: &str| -> Result<PathBuf, String> {
            existing(p.get_ref(), &place(p.span().start), key)
        };
        let resolved = |p: &str, at: &dyn fmt::Display, key: &str| -> Result<String, String> {
            Ok(existing(p, at, key)?.to_string_lossy().into_owned())
        };

        let mut datasets = BTreeMap::new();
        for (name, table) in &file.data {
            let source = match (&table.generate, table.train.is_empty()) {
                (Some(_), false) => {
                    return Err(format!(
                        "{}: data.{name}: give either files (train, val) or generate, not both",
                        place(table.train[0].span().start)
                    ));
                }
                (Some(g), true) => {
                    let mut g = g.clone();
                    if g.nodes.is_some() == g.depth.is_some() {
                        return Err(format!(
                            "{}: data.{name}.generate: give exactly one of nodes and depth",
                            path.display()
                        ));
                    }
                    let key = format!("data.{name}.generate");
                    for p in [&mut g.net, &mut g.book].into_iter().flatten() {
                        *p = resolved(p, &path.display(), &key)?;
                    }
                    check_generation(&g).map_err(|m| format!("{}: {key}.{m}", path.display()))?;
                    DataSource::Generate(g)
                }
                (None, true) => {
                    return Err(format!(
                        "{}: data.{name}: needs train and val files, or generate",
                        path.display()
                    ));
                }
                (None, false) => {
                    if table.val.is_empty() {
                        return Err(format!(
                            "{}: data.{name}: needs val files (held out from training)",
                            place(table.train[0].span().start)
                        ));
                    }
                    let train = table
                        .train
                        .iter()
                        .map(|p| must_exist(p, &format!("data.{name}.train")))
                        .collect::<Result<_, _>>()?;
                    let val = table
                        .val
                        .iter()
                        .map(|p| must_exist(p, &format!("data.{name}.val")))
                        .collect::<Result<_, _>>()?;
                    DataSource::Files { train, val }
                }
            };
            datasets.insert(
                name.clone(),
                Dataset {
                    name: name.clone(),
                    source,
                },
            );
        }

        let mut evaluations = BTreeMap::new();
        for (name, table) in &file.evaluation {
            let check_limit = |limit: &LimitTable, span: usize, key: &str, games: bool| {
                let given = [
                    limit.nodes.is_some(),
                    limit.depth.is_some(),
                    limit.movetime.is_some(),
                    limit.tc.is_some(),
                ]
                .iter()
                .filter(|&&b| b)
                .count();
                if given != 1 {
                    return Err(format!(
                        "{}: evaluation.{name}.{key}: give exactly one of nodes, depth, movetime{}",
                        place(span),
                        if games { ", tc" } else { "" }
                    ));
                }
                if !games && limit.tc.is_some() {
                    return Err(format!(
                        "{}: evaluation.{name}.{key}: tc is for games; use nodes, depth or movetime",
                        place(span)
                    ));
                }
                if let Some(tc) = &limit.tc {
                    parse_tc(tc)
                        .map_err(|e| format!("{}: evaluation.{name}.{key}.tc: {e}", place(span)))?;
                }
                Ok(())
            };
            let tournament = match &table.tournament {
                Some(t) => {
                    let span = t.span().start;
                    let mut t = t.get_ref().clone();
                    check_limit(&t.limit(), span, "tournament", true)?;
                    let at = place(span);
                    let key = format!("evaluation.{name}.tournament");
                    t.openings = resolved(&t.openings, &at, &format!("{key}.openings"))?;
                    for p in &mut t.players {
                        if !p.contains('=') {
                            *p = resolved(p, &at, &format!("{key}.players"))?;
                        }
                    }
                    Some(t)
                }
                None => None,
            };
            let puzzles = match &table.puzzles {
                Some(p) => {
                    let span = p.span().start;
                    let mut p = p.get_ref().clone();
                    check_limit(&p.limit(), span, "puzzles", false)?;
                    let key = format!("evaluation.{name}.puzzles.file");
                    p.file = resolved(&p.file, &place(span), &key)?;
                    Some(p)
                }
                None => None,
            };
            evaluations.insert(
                name.clone(),
                Evaluation {
                    name: name.clone(),
                    reference: table.reference.clone(),
                    tournament,
                    puzzles,
                },
            );
        }

        if file.experiment.is_empty() {
            return Err(format!("{}: no [[experiment]]", path.display()));
        }
        let d = &file.defaults;
        let mut experiments: Vec<Experiment> = Vec::new();
        for e in &file.experiment {
            let name = e.name.get_ref().trim().to_string();
            let name_place = place(e.name.span().start);
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                return Err(format!(
                    "{name_place}: name: '{name}' must be letters, digits, '-', '_' or '.'"
                ));
            }
            if experiments.iter().any(|x| x.name == name) {
                return Err(format!(
                    "{name_place}: name: experiment '{name}' is defined twice"
                ));
            }
            if e.feature_sets.is_empty() {
                return Err(format!(
                    "{name_place}: feature_sets: experiment '{name}' has none"
                ));
            }
            let mut feature_sets: Vec<String> = Vec::new();
            let mut feature_set_places = Vec::new();
            for fs in &e.feature_sets {
                let s = fs.get_ref().trim().to_string();
                if s.is_empty() || feature_sets.contains(&s) {
                    return Err(format!(
                        "{}: feature_sets: '{s}' is empty or listed twice",
                        place(fs.span().start)
                    ));
                }
                feature_sets.push(s);
                feature_set_places.push(place(fs.span().start));
            }
            macro_rules! pick {
                ($key:ident, $default:expr) => {
                    e.$key.clone().or(d.$key.clone()).unwrap_or($default)
                };
            }
            let settings = Settings {
                l1: pick!(l1, L1Width(512)).0,
                l2: pick!(l2, Count(32)).0,
                method: pick!(method, MethodName::Score),
                lr: pick!(lr, PositiveFraction(5e-4)).0,
                gamma: pick!(gamma, PositiveFraction(0.99)).0,
                batch_size: pick!(batch_size, Count(16384)).0,
                epochs: pick!(epochs, Count(256)).0,
                epoch_positions: pick!(epoch_positions, Count(100_000_000)).0,
                runs: pick!(runs, Positive(4)).0,
                seed: pick!(seed, 1),
                val_positions: pick!(val_positions, Count(1_000_000)).0,
                skip_in_check: pick!(skip_in_check, true),
                skip_capture_bestmove: pick!(skip_capture_bestmove, true),
                min_ply: e.min_ply.or(d.min_ply),
                max_ply: e.max_ply.or(d.max_ply),
                max_score: e.max_score.or(d.max_score).map(|p| p.0),
                skip_rate: pick!(skip_rate, UnitReal(0.0)).0,
                power: pick!(power, PositiveReal(2.6)).0,
                lambda: pick!(lambda, UnitReal(1.0)).0,
                target_scale: pick!(target_scale, PositiveReal(410.0)).0,
                output_scale: pick!(output_scale, PositiveReal(361.0)).0,
                wdl: e.wdl.or(d.wdl),
            };
            if let (Some(min), Some(max)) = (settings.min_ply, settings.max_ply)
                && min > max
            {
                return Err(format!(
                    "{name_place}: min_ply: {min} is after max_ply {max}: no position would be used"
                ));
            }
            if let Some([_, b]) = settings.wdl
                && !(b.is_finite() && b > 0.0)
            {
                return Err(format!("{name_place}: wdl: b must be above 0, not {b}"));
            }
            let data_ref = e.data.as_ref().or(d.data.as_ref()).ok_or_else(|| {
                format!(
                    "{name_place}: data: experiment '{name}' names no dataset (data = \"NAME\")"
                )
            })?;
            let data = datasets
                .get(data_ref.get_ref())
                .ok_or_else(|| {
                    format!(
                        "{}: data: no [data.{}] in the manifest",
                        place(data_ref.span().start),
                        data_ref.get_ref()
                    )
                })?
                .clone();
            let evaluation = match e.evaluation.as_ref().or(d.evaluation.as_ref()) {
                Some(r) => Some(
                    evaluations
                        .get(r.get_ref())
                        .ok_or_else(|| {
                            format!(
                                "{}: evaluation: no [evaluation.{}] in the manifest",
                                place(r.span().start),
                                r.get_ref()
                            )
                        })?
                        .clone(),
                ),
                None => None,
            };
            if let Some(ev) = &evaluation
                && let Some(reference) = &ev.reference
            {
                let players = match &ev.tournament {
                    Some(t) => super::evaluate::player_names(t, &feature_sets)
                        .map_err(|m| format!("{name_place}: evaluation.{}: {m}", ev.name))?,
                    None => feature_sets.clone(),
                };
                if !players.contains(reference) {
                    return Err(format!(
                        "{name_place}: evaluation.{}.reference: '{reference}' is not a player of experiment '{name}' (players: {})",
                        ev.name,
                        players.join(", ")
                    ));
                }
            }
            let init_from = match &e.init_from {
                Some(r) => {
                    let other = experiments
                        .iter()
                        .find(|x| &x.name == r.get_ref())
                        .ok_or_else(|| {
                            format!(
                                "{}: init_from: no experiment '{}' before this one",
                                place(r.span().start),
                                r.get_ref()
                            )
                        })?;
                    if let Some(fs) = feature_sets
                        .iter()
                        .find(|f| !other.feature_sets.contains(f))
                    {
                        return Err(format!(
                            "{}: init_from: experiment '{}' has no feature set '{fs}'",
                            place(r.span().start),
                            r.get_ref()
                        ));
                    }
                    Some(r.get_ref().clone())
                }
                None => None,
            };
            experiments.push(Experiment {
                name,
                feature_sets,
                feature_set_places,
                settings,
                data,
                evaluation,
                init_from,
            });
        }
        Ok(Manifest {
            path: path.to_path_buf(),
            experiments,
        })
    }
}

/// Ply windows the generation stage would refuse: checked by [`Manifest::parse`]. The error
/// starts with the key (`write_minply: ...`).
fn check_generation(g: &GenerateTable) -> Result<(), String> {
    let defaults = crate::gensfen::GensfenConfig::default();
    let random_min = g
        .random_minply
        .map_or(i64::from(defaults.random_minply), i64::from);
    let random_max = g.random_maxply.unwrap_or(defaults.random_maxply);
    if random_min > i64::from(random_max) {
        return Err(format!(
            "random_minply: {random_min} is after random_maxply {random_max}"
        ));
    }
    let write_min = g.write_minply.unwrap_or(defaults.write_minply);
    let write_max = g.write_maxply.unwrap_or(defaults.write_maxply);
    if write_min > write_max {
        return Err(format!(
            "write_minply: {write_min} is after write_maxply {write_max}: nothing would be written"
        ));
    }
    Ok(())
}

impl GenerateTable {
    /// What the generation stage could not use, checked by `trainer run --check` for the
    /// experiments it would run (it reads files and looks for programs, so a manifest stays
    /// loadable on a machine that lacks another experiment's engine): a `net` that is not a
    /// network, a `book` that is not an EPD book, a labeler engine that does not exist. The
    /// error starts with the key (`book: ...`).
    pub fn check_inputs(&self) -> Result<(), String> {
        let g = self;
        if let Some(net) = &g.net {
            host::nnue::check_network_file(Path::new(net)).map_err(|e| format!("net: {e}"))?;
        }
        if let Some(book) = &g.book {
            crate::gensfen::read_book(Path::new(book)).map_err(|e| format!("book: {e}"))?;
        }
        if let Some(spec) = &g.labeler {
            let spec = arena::uci::EngineSpec::parse(spec).map_err(|e| format!("labeler: {e}"))?;
            let found = if spec.command.components().count() > 1 {
                spec.command.is_file()
            } else {
                std::env::var_os("PATH").is_some_and(|paths| {
                    std::env::split_paths(&paths).any(|dir| dir.join(&spec.command).is_file())
                })
            };
            if !found {
                return Err(format!(
                    "labeler: engine {} does not exist",
                    spec.command.display()
                ));
            }
        }
        Ok(())
    }
}

/// Parses a time control `base+increment` in seconds (`10+0.1`, `60`) into milliseconds.
pub fn parse_tc(tc: &str) -> Result<(u64, u64), String> {
    let (base, inc) = tc.split_once('+').unwrap_or((tc, "0"));
    let secs = |s: &str| -> Result<u64, String> {
        let v: f64 = s
            .trim()
            .parse()
            .map_err(|_| format!("'{tc}' is not a time control base+increment in seconds"))?;
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!("'{tc}': times must be 0 or more"));
        }
        Ok((v * 1000.0).round() as u64)
    };
    let (b, i) = (secs(base)?, secs(inc)?);
    if b == 0 && i == 0 {
        return Err(format!("'{tc}': no time at all"));
    }
    Ok((b, i))
}
