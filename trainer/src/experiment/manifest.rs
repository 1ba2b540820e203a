//! The experiment manifest (`experiments.toml`): shared defaults, named datasets, named
//! evaluations and a list of experiments.
//!
//! Parsing is strict: an unknown key, a value of the wrong type or out of range, a dataset or
//! evaluation that is not defined, or a missing file is an error of one line naming the file,
//! the line and the key. Relative paths are relative to the manifest's folder.

use super::engine_net::export_engine;
use super::stage_kind::StageKind;
use anyhow::{Context, Result, anyhow, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use arena::move_limit::MoveLimit;
use arena::uci::EngineSpec;
use serde::{Deserialize, Serialize};
use toml::Spanned;

pub use crate::checked::Positive;
use crate::gensfen::{LabelSettings, PlayerSettings, SelfPlaySettings, Target};
use crate::train::settings::{ArchSetting, TrainSettings};

/// Where in the manifest a value came from: its file and 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestPlace {
    /// The manifest file.
    pub file: PathBuf,
    /// The line, 1-based.
    pub line: usize,
}

impl fmt::Display for ManifestPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// A table as written, every value with its place: `[defaults]` and each `[[experiment]]`,
/// whose settings are overlaid before they are read as [`TrainSettings`].
type RawTable = BTreeMap<String, Spanned<toml::Value>>;

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
    pub generate: Option<Spanned<RawTable>>,
}

/// `generate = { ... }` of a dataset: `trainer gensfen`'s settings.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GenerateTable {
    /// Games of training data, or positions (the last game cut short): `games` or
    /// `positions`, as `trainer gensfen --games/--positions`.
    #[serde(flatten)]
    pub target: Target,
    /// Training data in this many shards (`trainer gensfen --shard i/N`, one file each, the
    /// games or positions split between them): one job each under the Slurm executor (an
    /// array job), one after another locally; the files are the same either way. (Not written
    /// when absent: one file, the stage keys of before.)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards: Option<Positive>,
    /// Games of validation data (generated with another seed).
    pub val_games: Positive,
    /// Who plays, from where, and how long each move is searched: `nodes`, `depth` (or
    /// `depth_min` and `depth_max`), `net`, `book` and `labeler`, as `trainer gensfen`'s
    /// options of the same names.
    #[serde(flatten)]
    pub player: PlayerSettings,
    /// The labeller apart from the player: `label` (a budget: static, qsearch, nodes=N,
    /// depth=D) and `label_net`, as `trainer gensfen`'s `--label` and `--label-net`.
    #[serde(flatten)]
    pub label: LabelSettings,
    /// The labeller's network as a UCI engine's embedded one (`label_net = "export:ENGINE"`):
    /// the data stage exports it ([`super::engine_net`]) and labels with the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_net_from: Option<String>,
    /// Seed.
    pub seed: u64,
    /// Threads (0: one per core).
    pub threads: u32,
    /// How games are played and written: the keys of `trainer gensfen`'s options of the same
    /// names (`random_moves`, `write_minply`, `eval_limit`, ...).
    #[serde(flatten)]
    pub game: SelfPlaySettings,
}

impl GenerateTable {
    /// Reads a `generate` table; `key` names it in errors (`data.NAME.generate`).
    fn read(
        table: &Spanned<RawTable>,
        key: &str,
        place: &dyn Fn(usize) -> ManifestPlace,
    ) -> Result<Self> {
        let at = place(table.span().start);
        let mut raw = table.get_ref().clone();
        let mut required = |name: &str| -> Result<Positive> {
            take::<Positive>(&mut raw, name, place)?
                .map(Spanned::into_inner)
                .with_context(|| format!("{at}: {key}: {name} is required"))
        };
        let val_games = required("val_games")?;
        let mut optional = |name: &str| take::<Positive>(&mut raw, name, place);
        let (games, positions) = (optional("games")?, optional("positions")?);
        let target = Target::of(
            games.map(|g| g.get_ref().get()),
            positions.map(|p| p.get_ref().get()),
        )
        .map_err(|e| anyhow!("{at}: {key}: {e}"))?;
        let shards = optional("shards")?;
        let (label, label_net) = (
            take::<String>(&mut raw, "label", place)?,
            take::<String>(&mut raw, "label_net", place)?,
        );
        let budget = match label {
            Some(b) => Some(
                b.get_ref()
                    .parse()
                    .map_err(|e: String| anyhow!("{}: {key}.label: {e}", place(b.span().start)))?,
            ),
            None => None,
        };
        if let (Some(n), None) = (&label_net, &budget) {
            bail!(
                "{}: {key}.label_net: a labeller network needs a label budget (label)",
                place(n.span().start)
            );
        }
        let seed = take::<u64>(&mut raw, "seed", place)?;
        let threads = take::<u32>(&mut raw, "threads", place)?;
        Ok(GenerateTable {
            target,
            shards: shards.map(Spanned::into_inner),
            val_games,
            player: read_part(&mut raw, &format!("{key}."), place)?,
            label: LabelSettings {
                budget,
                net: label_net
                    .as_ref()
                    .filter(|n| export_engine(n.get_ref()).is_none())
                    .map(|n| n.get_ref().into()),
            },
            label_net_from: label_net
                .as_ref()
                .and_then(|n| export_engine(n.get_ref()))
                .map(str::to_string),
            seed: seed.map_or(0, Spanned::into_inner),
            threads: threads.map_or(0, Spanned::into_inner),
            game: read_table(raw, &format!("{key}."), place)?,
        })
    }
}

/// `tournament = { ... }` of an evaluation. (Its move limit is flattened into it, and refuses
/// the keys the table does not declare, as `deny_unknown_fields` would, which serde does not
/// allow beside `flatten`.)
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TournamentTable {
    /// Game pairs (each opening with both colours) per pairing of players.
    pub rounds: Positive,
    /// Openings (EPD or FEN per line).
    pub openings: String,
    /// Parallel games (0: one per core, [`arena::workers::workers`]).
    #[serde(default = "one_worker")]
    pub concurrency: u64,
    /// Hash of every engine, MiB.
    #[serde(default = "sixteen")]
    pub hash: Positive,
    /// Extra players: network files or engine specs (`name=..,cmd=..,option.X=..`).
    #[serde(default)]
    pub players: Vec<String>,
    /// Seed of the opening order.
    #[serde(default)]
    pub seed: u64,
    /// How long each move is searched: one of `nodes`, `depth`, `movetime`, `tc`.
    #[serde(flatten)]
    pub limit: MoveLimit,
    /// Play only these pairings (`[["a", "b"], ...]`, player names) instead of a round robin:
    /// A/B comparisons, each reported head to head with its own error bars. (Not written when
    /// empty, so the stage keys of round robins stay as they were.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<[String; 2]>,
    /// Play the games in this many batches (contiguous shares of the game pairs, each cached
    /// on its own and merged in schedule order): one Slurm job each (an array job), one after
    /// another locally; the games, PGN and ratings are the same either way. (Not written when
    /// absent, so the stage keys of before stay.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batches: Option<Positive>,
}

impl TournamentTable {
    /// The engine specs of the tournament's extra players (network files or engine specs),
    /// named so that they never collide with `taken` (the trained networks) or one another.
    pub fn extra_specs(&self, taken: &[String]) -> Result<Vec<EngineSpec>> {
        let mut specs: Vec<EngineSpec> = Vec::new();
        for text in &self.players {
            let mut spec = EngineSpec::parse(text).map_err(anyhow::Error::msg)?;
            if !text.contains('=') {
                spec.options
                    .push(("Hash".into(), self.hash.get().to_string()));
            }
            if taken.contains(&spec.name) || specs.iter().any(|s| s.name == spec.name) {
                let folder = Path::new(text)
                    .parent()
                    .and_then(|p| p.file_name())
                    .map_or("extra".into(), |f| f.to_string_lossy().into_owned());
                spec.name = format!("{folder}/{}", spec.name);
            }
            specs.push(spec);
        }
        Ok(specs)
    }

    /// The names the tournament rates: the experiment's feature sets, then its extra players
    /// (what a `reference` may name).
    pub fn player_names(&self, feature_sets: &[String]) -> Result<Vec<String>> {
        let mut names = feature_sets.to_vec();
        names.extend(self.extra_specs(feature_sets)?.into_iter().map(|s| s.name));
        Ok(names)
    }
}

impl TournamentTable {
    /// The number of batches its games are played in (1 unless `batches` says more).
    pub fn batch_count(&self) -> usize {
        self.batches.map_or(1, |b| b.get() as usize)
    }
}

/// One worker: the default of `concurrency` and of the puzzles' `threads`.
fn one_worker() -> u64 {
    1
}

fn sixteen() -> Positive {
    Positive::new(16)
}

/// `puzzles = { ... }` of an evaluation (its move limit flattened into it, as a tournament's).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PuzzlesTable {
    /// The puzzle file (`FEN,moves,rating,themes`).
    pub file: String,
    /// The first this-many puzzles (default: all).
    pub count: Option<Positive>,
    /// Parallel engines (0: one per core).
    #[serde(default = "one_worker")]
    pub threads: u64,
    /// How long each answer is searched: one of `nodes`, `depth`, `movetime`.
    #[serde(flatten)]
    pub limit: MoveLimit,
}

/// `speed = { ... }` of an evaluation: each network's search speed, `host bench --net`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SpeedTable {
    /// Search depth of the bench positions.
    #[serde(default = "bench_depth")]
    pub depth: Positive,
    /// Measurements per network (interleaved across networks; the median is reported).
    #[serde(default = "three")]
    pub repeats: Positive,
}

fn bench_depth() -> Positive {
    Positive::new(u64::from(host::engine::bench::DEFAULT_DEPTH))
}

fn three() -> Positive {
    Positive::new(3)
}

/// `[evaluation.NAME]`: a tournament, puzzles and/or a speed measurement.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvaluationTable {
    /// The feature set (or extra player) whose rating is 0; default: the first feature set.
    pub reference: Option<String>,
    /// The tournament between the experiment's networks.
    pub tournament: Option<Spanned<TournamentTable>>,
    /// Puzzle accuracy of each network.
    pub puzzles: Option<Spanned<PuzzlesTable>>,
    /// Search speed of each network.
    pub speed: Option<SpeedTable>,
}

/// The whole file as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    #[serde(default)]
    defaults: RawTable,
    #[serde(default)]
    cluster: RawTable,
    #[serde(default)]
    data: BTreeMap<String, DataTable>,
    #[serde(default)]
    evaluation: BTreeMap<String, EvaluationTable>,
    #[serde(default)]
    experiment: Vec<Spanned<RawTable>>,
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
    Generate(Box<GenerateTable>),
}

/// A named dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// Its name in the manifest.
    pub name: String,
    /// Where the positions come from.
    pub source: DataSource,
}

/// Runs of each network of an experiment that does not say (`runs`): the thesis's four.
pub const DEFAULT_RUNS: u64 = 4;

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
    /// The speed measurement.
    pub speed: Option<SpeedTable>,
}

/// One experiment, ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Experiment {
    /// Name.
    pub name: String,
    /// Feature sets, in the manifest's order.
    pub feature_sets: Vec<String>,
    /// Where each feature set is written (for errors found later, e.g. an unknown block).
    pub feature_set_places: Vec<ManifestPlace>,
    /// Training settings: the experiment's keys over `[defaults]` over the thesis's.
    pub settings: TrainSettings,
    /// Repeated runs of each network (`runs`, 4 unless set: the thesis's), run k seeded with
    /// `seed + k − 1`.
    pub runs: u64,
    /// The datasets (`data = "NAME"`, or a list of names: every feature set trained on each,
    /// its networks named `FS@DATA`).
    pub data: Vec<Dataset>,
    /// The dataset whose validation files score every network (`val_data`): one held-out set
    /// for networks trained on different data; none: each network's own dataset's.
    pub val_data: Option<Dataset>,
    /// The dataset whose validation files the report scores every run's network on
    /// (`test_data`), by `trainer score`'s yardstick ([`crate::train::held_out`]): a loss
    /// measured on positions the best epoch was not chosen on.
    pub test_data: Option<Dataset>,
    /// The evaluations (`evaluation = "NAME"` or a list of names: the same networks under
    /// several conditions, say fixed nodes and fixed time).
    pub evaluations: Vec<Evaluation>,
    /// Experiment whose final networks initialize this one's runs.
    pub init_from: Option<String>,
    /// Whether the report draws and attributes every feature set's network (`insight`, on
    /// unless set to false, in the experiment or in `[defaults]`).
    pub insight: bool,
    /// The shapes every feature set is trained in (`archs`: presets' names or tables), each
    /// with its label; empty: the settings' one shape.
    pub archs: Vec<(String, ArchSetting)>,
    /// The name of the `[[experiment]]` whose `sweep` made this one a cell of its grid.
    pub group: Option<String>,
    /// Train on the first this many positions of each training dataset (`train_positions`):
    /// a rung of a data ladder, whose smaller rungs' data lie inside the larger ones'; none:
    /// the whole dataset.
    pub train_positions: Option<u64>,
}

/// One line of an experiment's results: a feature set, in one shape when the experiment lists
/// several (`archs`), trained on one dataset when it lists several (`data`).
#[derive(Clone, Debug)]
pub struct Entry {
    /// What its networks are called in games and reports: the feature set, `FS@SHAPE`,
    /// `FS@DATA` or `FS@SHAPE@DATA`.
    pub name: String,
    /// The feature-set spec.
    pub feature_set: String,
    /// The training settings: the experiment's, in this entry's shape.
    pub settings: TrainSettings,
    /// The dataset it trains on.
    pub data: Dataset,
    /// The first this many of the dataset's training positions are all it trains on (none:
    /// every one).
    pub train_positions: Option<u64>,
}

impl Entry {
    /// How many positions it trains on, where the manifest tells: its rung's
    /// `train_positions`, or the positions its generated dataset is made of.
    pub fn training_positions(&self) -> Option<u64> {
        self.train_positions
            .or_else(|| generation_positions(&self.data))
    }
}

impl Experiment {
    /// Every feature set in every shape on every dataset, feature set after feature set.
    pub fn entries(&self) -> Vec<Entry> {
        let shapes: Vec<(Option<&str>, TrainSettings)> = match self.archs.is_empty() {
            true => vec![(None, self.settings.clone())],
            false => self
                .archs
                .iter()
                .map(|(label, arch)| {
                    let settings = TrainSettings {
                        arch: Some(arch.clone()),
                        ..self.settings.clone()
                    };
                    (Some(label.as_str()), settings)
                })
                .collect(),
        };
        let several_data = self.data.len() > 1;
        let mut out = Vec::new();
        for fs in &self.feature_sets {
            for (shape, settings) in &shapes {
                for data in &self.data {
                    let mut name = fs.clone();
                    if let Some(label) = shape {
                        name = format!("{name}@{label}");
                    }
                    if several_data {
                        name = format!("{name}@{}", data.name);
                    }
                    out.push(Entry {
                        name,
                        feature_set: fs.clone(),
                        settings: settings.clone(),
                        data: data.clone(),
                        train_positions: self.train_positions,
                    });
                }
            }
        }
        out
    }

    /// What its networks train on, for messages and reports: the datasets' names
    /// (`stockfish-12k`, `a, b`), after `the first N positions of` on a ladder's rung.
    pub fn data_label(&self) -> String {
        let names: Vec<&str> = self.data.iter().map(|d| d.name.as_str()).collect();
        match self.train_positions {
            Some(n) => format!("the first {n} positions of {}", names.join(", ")),
            None => names.join(", "),
        }
    }

    /// The names of [`entries`](Self::entries).
    pub fn entry_names(&self) -> Vec<String> {
        self.entries().into_iter().map(|e| e.name).collect()
    }

    /// Every dataset the experiment reads, once: its training data, then the held-out
    /// `val_data` and `test_data` unless listed before.
    pub fn datasets(&self) -> impl Iterator<Item = &Dataset> {
        let mut seen: Vec<&str> = Vec::new();
        self.data
            .iter()
            .chain(&self.val_data)
            .chain(&self.test_data)
            .filter(move |d| {
                let new = !seen.contains(&d.name.as_str());
                seen.push(&d.name);
                new
            })
    }
}

/// A parsed, validated manifest.
#[derive(Clone, Debug)]
pub struct Manifest {
    /// The file it was read from.
    pub path: PathBuf,
    /// Experiments in file order.
    pub experiments: Vec<Experiment>,
    /// The `[cluster]` table: resources of the Slurm executor's jobs.
    pub cluster: ClusterTable,
}

/// What one Slurm job asks for (`sbatch`'s options of the same names; Slurm checks the
/// values). Unset: Slurm's default.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobResources {
    /// `--partition`.
    pub partition: Option<String>,
    /// `--account`.
    pub account: Option<String>,
    /// `--time` (`minutes`, `HH:MM:SS`, `D-HH:MM:SS`...).
    pub time: Option<String>,
    /// `--cpus-per-task`.
    pub cpus: Option<Positive>,
    /// `--mem` (`8G`...).
    pub mem: Option<String>,
    /// GPUs (`--gres=gpu:N`); a training job with one trains on `cuda`.
    pub gpus: Option<u32>,
}

impl JobResources {
    /// `self`'s values where set, else `base`'s.
    fn over(&self, base: &JobResources) -> JobResources {
        JobResources {
            partition: self.partition.clone().or_else(|| base.partition.clone()),
            account: self.account.clone().or_else(|| base.account.clone()),
            time: self.time.clone().or_else(|| base.time.clone()),
            cpus: self.cpus.or(base.cpus),
            mem: self.mem.clone().or_else(|| base.mem.clone()),
            gpus: self.gpus.or(base.gpus),
        }
    }
}

/// `[cluster]`: every job's resources, and those of one kind of stage in `[cluster.data]`,
/// `[cluster.train]`, `[cluster.eval]` and `[cluster.report]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterTable {
    /// Every job's.
    pub all: JobResources,
    /// Per kind of stage, over `all`.
    pub kinds: BTreeMap<StageKind, JobResources>,
}

impl ClusterTable {
    /// The resources of a job of `kind`: the command line's `overrides` over the kind's
    /// table over `[cluster]`'s.
    pub fn resources(&self, kind: StageKind, overrides: &JobResources) -> JobResources {
        let base = match self.kinds.get(&kind) {
            Some(k) => k.over(&self.all),
            None => self.all.clone(),
        };
        overrides.over(&base)
    }

    fn read(mut raw: RawTable, place: &dyn Fn(usize) -> ManifestPlace) -> Result<Self> {
        let mut kinds = BTreeMap::new();
        for kind in StageKind::ALL {
            if let Some(k) = take::<JobResources>(&mut raw, kind.name(), place)? {
                kinds.insert(kind, k.into_inner());
            }
        }
        Ok(ClusterTable {
            all: read_table(raw, "cluster.", place)?,
            kinds,
        })
    }
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl Manifest {
    /// The experiments named by `only` (all when it is empty), in file order. A name ending in
    /// `*` selects every experiment that starts with the rest (`baseline-small-*`); the name of
    /// an `[[experiment]]` with a `sweep` selects all its cells; a name or pattern that selects
    /// nothing is an error listing the experiments there are.
    pub fn select(&self, only: &[String]) -> Result<Vec<&Experiment>> {
        let matches = |pattern: &str, e: &Experiment| {
            let name_matches = |name: &str| match pattern.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == pattern,
            };
            name_matches(&e.name) || e.group.as_deref().is_some_and(name_matches)
        };
        for pattern in only {
            if !self.experiments.iter().any(|e| matches(pattern, e)) {
                let known: Vec<&str> = self.experiments.iter().map(|e| e.name.as_str()).collect();
                bail!(
                    "--only {pattern}: {} has no such experiment (it has: {})",
                    self.path.display(),
                    known.join(", ")
                );
            }
        }
        Ok(self
            .experiments
            .iter()
            .filter(|e| only.is_empty() || only.iter().any(|p| matches(p, e)))
            .collect())
    }

    /// The names of the data ladders: sweeps whose cells all set `train_positions`, each to
    /// a size of its own (a sweep over `train_positions` alone), in file order.
    pub fn ladders(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for group in self.experiments.iter().filter_map(|e| e.group.clone()) {
            if out.contains(&group) {
                continue;
            }
            let rungs = self.ladder_rungs(&group);
            let sizes: BTreeSet<Option<u64>> = rungs.iter().map(|e| e.train_positions).collect();
            if rungs.len() > 1 && sizes.len() == rungs.len() && !sizes.contains(&None) {
                out.push(group);
            }
        }
        out
    }

    /// The ladders all of whose rungs are among `selected`: those a run of them draws.
    pub fn selected_ladders(&self, selected: &[&Experiment]) -> Vec<String> {
        self.ladders()
            .into_iter()
            .filter(|group| {
                self.ladder_rungs(group)
                    .iter()
                    .all(|r| selected.iter().any(|e| e.name == r.name))
            })
            .collect()
    }

    /// The cells of sweep `group`, in file order (smallest rung first on a ladder, whose sizes
    /// are checked to increase).
    pub fn ladder_rungs(&self, group: &str) -> Vec<&Experiment> {
        self.experiments
            .iter()
            .filter(|e| e.group.as_deref() == Some(group))
            .collect()
    }

    /// The experiment `name`.
    pub fn experiment(&self, name: &str) -> Result<&Experiment> {
        self.experiments
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| anyhow!("{}: no experiment '{name}'", self.path.display()))
    }

    /// The dataset `name` that an experiment reads.
    pub fn dataset(&self, name: &str) -> Result<&Dataset> {
        self.experiments
            .iter()
            .flat_map(Experiment::datasets)
            .find(|d| d.name == name)
            .ok_or_else(|| {
                anyhow!(
                    "{}: no experiment reads a dataset '{name}'",
                    self.path.display()
                )
            })
    }

    /// Reads and validates a manifest file.
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        Manifest::parse(&text, path)
    }

    /// Parses and validates manifest text; `path` names it in errors and anchors relative paths.
    /// Each kind of table is read by its own part of `ManifestReader`: the datasets, the evaluations,
    /// then each experiment (which names them), then the cluster's resources.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest> {
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
                Some(k) => anyhow!("{}:{line}: {k}: {message}", path.display()),
                None => anyhow!("{}:{line}: {message}", path.display()),
            }
        })?;
        let r = ManifestReader {
            path,
            text,
            base: path.parent().unwrap_or(Path::new("")).to_path_buf(),
        };
        let place = |offset: usize| r.place(offset);
        let datasets = r.datasets(&file)?;
        let evaluations = r.evaluations(&file)?;
        if file.experiment.is_empty() {
            bail!("{}: no [[experiment]]", path.display());
        }
        let mut experiments: Vec<Experiment> = Vec::new();
        for table in &file.experiment {
            for (own, group) in sweep_cells(table, &place)? {
                let tables = (&file, &datasets, &evaluations);
                let experiment = r.experiment(table, own, group, tables, &experiments)?;
                experiments.push(experiment);
            }
        }
        Ok(Manifest {
            path: path.to_path_buf(),
            experiments,
            cluster: ClusterTable::read(file.cluster, &place)?,
        })
    }
}

/// What reading one manifest's tables needs: its file (for messages and relative paths) and
/// its text (for line numbers).
struct ManifestReader<'a> {
    path: &'a Path,
    text: &'a str,
    /// The manifest's folder, which relative paths start from.
    base: PathBuf,
}

/// The tables an experiment names: the whole file (its defaults), the datasets and the
/// evaluations.
type Named<'t> = (
    &'t ManifestFile,
    &'t BTreeMap<String, Dataset>,
    &'t BTreeMap<String, Evaluation>,
);

impl ManifestReader<'_> {
    /// The place of byte `offset` of the manifest.
    fn place(&self, offset: usize) -> ManifestPlace {
        ManifestPlace {
            file: self.path.to_path_buf(),
            line: line_of(self.text, offset),
        }
    }

    /// A path resolved against the manifest's folder.
    fn resolve(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base.join(p)
        }
    }

    /// A path resolved against the manifest's folder, which must exist; `at` is the place the
    /// error names.
    fn existing(&self, p: &str, at: &dyn fmt::Display, key: &str) -> Result<PathBuf> {
        let full = self.resolve(p);
        if !full.exists() {
            bail!("{at}: {key}: no such file {}", full.display());
        }
        Ok(full)
    }

    /// [`existing`](Self::existing) at the value's own place.
    fn must_exist(&self, p: &Spanned<String>, key: &str) -> Result<PathBuf> {
        self.existing(p.get_ref(), &self.place(p.span().start), key)
    }

    /// [`existing`](Self::existing) as text.
    fn resolved(&self, p: &str, at: &dyn fmt::Display, key: &str) -> Result<String> {
        Ok(self.existing(p, at, key)?.to_string_lossy().into_owned())
    }

    /// The `[data.NAME]` tables.
    fn datasets(&self, file: &ManifestFile) -> Result<BTreeMap<String, Dataset>> {
        let (path, place) = (self.path, |offset: usize| self.place(offset));
        let resolved = |p: &str, at: &dyn fmt::Display, key: &str| self.resolved(p, at, key);
        let must_exist = |p: &Spanned<String>, key: &str| self.must_exist(p, key);
        let mut datasets = BTreeMap::new();
        for (name, table) in &file.data {
            let source = match (&table.generate, table.train.is_empty()) {
                (Some(_), false) => {
                    bail!(
                        "{}: data.{name}: give either files (train, val) or generate, not both",
                        place(table.train[0].span().start)
                    );
                }
                (Some(g), true) => {
                    let key = format!("data.{name}.generate");
                    let mut g = GenerateTable::read(g, &key, &place)?;
                    let files = [&mut g.player.net, &mut g.player.book, &mut g.label.net];
                    for p in files.into_iter().flatten() {
                        let text = p.to_string_lossy().into_owned();
                        *p = resolved(&text, &path.display(), &key)?.into();
                    }
                    g.player
                        .check()
                        .and_then(|()| g.game.check())
                        .map_err(|m| anyhow!("{}: {key}.{m}", path.display()))?;
                    DataSource::Generate(Box::new(g))
                }
                (None, true) => {
                    bail!(
                        "{}: data.{name}: needs train and val files, or generate",
                        path.display()
                    );
                }
                (None, false) => {
                    if table.val.is_empty() {
                        bail!(
                            "{}: data.{name}: needs val files (held out from training)",
                            place(table.train[0].span().start)
                        );
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

        Ok(datasets)
    }

    /// The `[evaluation.NAME]` tables.
    fn evaluations(&self, file: &ManifestFile) -> Result<BTreeMap<String, Evaluation>> {
        let place = |offset: usize| self.place(offset);
        let resolved = |p: &str, at: &dyn fmt::Display, key: &str| self.resolved(p, at, key);
        let mut evaluations = BTreeMap::new();
        for (name, table) in &file.evaluation {
            let tournament = match &table.tournament {
                Some(t) => {
                    let span = t.span().start;
                    let mut t = t.get_ref().clone();
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
                    p.limit
                        .for_one_search()
                        .map_err(|e| anyhow!("{}: evaluation.{name}.puzzles: {e}", place(span)))?;
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
                    speed: table.speed.clone(),
                },
            );
        }

        Ok(evaluations)
    }

    /// One experiment: a cell `own` of the `[[experiment]]` table `table` (of the sweep
    /// `group`, if any) over the defaults, with the datasets and evaluations it names and the
    /// experiments read `before` it (which `init_from` may name).
    fn experiment(
        &self,
        table: &Spanned<RawTable>,
        mut own: RawTable,
        group: Option<String>,
        (file, datasets, evaluations): Named,
        experiments: &[Experiment],
    ) -> Result<Experiment> {
        let place = |offset: usize| self.place(offset);
        let e_name = take::<String>(&mut own, "name", &place)?
            .ok_or_else(|| anyhow!("{}: [[experiment]] has no name", place(table.span().start)))?;
        let e_sets = take::<Vec<String>>(&mut own, "feature_sets", &place)?;
        let init_from = take::<String>(&mut own, "init_from", &place)?;
        // The experiment's settings over the defaults' (over the thesis's, in
        // `TrainSettings::default`).
        let mut merged = file.defaults.clone();
        merged.extend(own);
        let data_ref = take::<toml::Value>(&mut merged, "data", &place)?;
        let val_data_ref = take::<String>(&mut merged, "val_data", &place)?;
        let test_data_ref = take::<String>(&mut merged, "test_data", &place)?;
        let evaluation_ref = take::<toml::Value>(&mut merged, "evaluation", &place)?;
        let insight = take::<bool>(&mut merged, "insight", &place)?.is_none_or(Spanned::into_inner);
        let train_positions = take::<Positive>(&mut merged, "train_positions", &place)?;
        let runs = take::<Positive>(&mut merged, "runs", &place)?
            .map_or(DEFAULT_RUNS, |r| r.into_inner().get());
        let archs_at = merged.get("archs").map(|v| v.span().start);
        let archs: Vec<(String, ArchSetting)> =
            take::<Vec<ArchSetting>>(&mut merged, "archs", &place)?
                .map(Spanned::into_inner)
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(k, a)| {
                    let label = match &a {
                        ArchSetting::Preset(p) => p.name().to_string(),
                        ArchSetting::Table(_) => format!("arch{}", k + 1),
                    };
                    (label, a)
                })
                .collect();
        let name = e_name.get_ref().trim().to_string();
        let name_place = place(e_name.span().start);
        if !crate::file_names::is_plain_name(&name) {
            bail!("{name_place}: name: '{name}' must be letters, digits, '-', '_' or '.'");
        }
        if experiments.iter().any(|x| x.name == name) {
            bail!("{name_place}: name: experiment '{name}' is defined twice");
        }
        let sets_at = e_sets
            .as_ref()
            .map_or(e_name.span().start, |s| s.span().start);
        let listed = e_sets.map(Spanned::into_inner).unwrap_or_default();
        if listed.is_empty() {
            bail!("{name_place}: feature_sets: experiment '{name}' has none");
        }
        let feature_sets = distinct_names(&listed).map_err(|s| {
            anyhow!(
                "{}: feature_sets: '{s}' is empty or listed twice",
                place(sets_at)
            )
        })?;
        let feature_set_places = vec![place(sets_at); feature_sets.len()];
        let settings: TrainSettings = read_table(merged, "", &place)?;
        settings
            .check()
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("{name_place}"))?;
        if let Some(at) = archs_at {
            let at = place(at);
            if settings.arch.is_some() {
                bail!("{at}: archs: give one shape (arch) or several (archs), not both");
            }
            for (k, (label, arch)) in archs.iter().enumerate() {
                if archs[..k].iter().any(|(l, _)| l == label) {
                    bail!("{at}: archs: '{label}' is listed twice");
                }
                let one = TrainSettings {
                    arch: Some(arch.clone()),
                    ..settings.clone()
                };
                one.check()
                    .map_err(|e| anyhow!("{at}: archs: {label}: {e}"))?;
            }
            if archs.is_empty() {
                bail!("{at}: archs: an empty list (leave it out for the one shape of arch)");
            }
        }
        let data_ref = data_ref.ok_or_else(|| {
            anyhow!("{name_place}: data: experiment '{name}' names no dataset (data = \"NAME\")")
        })?;
        let dataset = |key: &str, wanted: &str, at: usize| -> Result<Dataset> {
            datasets
                .get(wanted)
                .cloned()
                .ok_or_else(|| anyhow!("{}: {key}: no [data.{wanted}] in the manifest", place(at)))
        };
        let data_at = data_ref.span().start;
        let mut data: Vec<Dataset> = Vec::new();
        for wanted in names_of(data_ref.get_ref(), "data", "a dataset", &place(data_at))? {
            if data.iter().any(|d| d.name == wanted) {
                bail!("{}: data: '{wanted}' is listed twice", place(data_at));
            }
            data.push(dataset("data", wanted, data_at)?);
        }
        if let Some(n) = &train_positions {
            let at = place(n.span().start);
            for d in &data {
                if let Some(have) = generation_positions(d)
                    && n.get_ref().get() > have
                {
                    bail!(
                        "{at}: train_positions: {} is more than the {have} training positions of dataset '{}'",
                        n.get_ref().get(),
                        d.name
                    );
                }
            }
        }
        let val_data = match &val_data_ref {
            Some(v) => Some(dataset("val_data", v.get_ref(), v.span().start)?),
            None => None,
        };
        let test_data = match &test_data_ref {
            Some(t) => Some(dataset("test_data", t.get_ref(), t.span().start)?),
            None => None,
        };
        if let (Some(t), Some(v)) = (&test_data_ref, &val_data)
            && t.get_ref() == &v.name
        {
            bail!(
                "{}: test_data: '{}' is the validation set too: the loss reported would be the one the best epoch was chosen on",
                place(t.span().start),
                v.name
            );
        }
        if settings.passes.is_some()
            && train_positions.is_none()
            && let Some(d) = data.iter().find(|d| generation_positions(d).is_none())
        {
            bail!(
                "{name_place}: passes: the training positions of dataset '{}' are not known before it is read: set train_positions, or epochs instead",
                d.name
            );
        }
        let experiment = Experiment {
            name: name.clone(),
            feature_sets,
            feature_set_places,
            settings,
            runs,
            data,
            val_data,
            test_data,
            evaluations: Vec::new(),
            init_from: None,
            insight,
            archs,
            group: None,
            train_positions: train_positions.map(|n| n.into_inner().get()),
        };
        // Every network of the experiment, by the name it plays under.
        let entry_names = experiment.entry_names();
        let at = (name.as_str(), &name_place);
        let chosen =
            self.chosen_evaluations(evaluation_ref.as_ref(), evaluations, &entry_names, at)?;
        let init_from = self.init_source(init_from.as_ref(), experiments, &entry_names)?;
        Ok(Experiment {
            evaluations: chosen,
            init_from,
            group,
            ..experiment
        })
    }

    /// The evaluations an experiment names (`evaluation`, one or a list), each checked against
    /// the experiment's networks `entry_names`: its reference and pairs must be players.
    /// `(name, name_place)` name the experiment in errors.
    fn chosen_evaluations(
        &self,
        evaluation_ref: Option<&Spanned<toml::Value>>,
        evaluations: &BTreeMap<String, Evaluation>,
        entry_names: &[String],
        (name, name_place): (&str, &ManifestPlace),
    ) -> Result<Vec<Evaluation>> {
        let place = |offset: usize| self.place(offset);
        let mut chosen = Vec::new();
        if let Some(r) = &evaluation_ref {
            let at = place(r.span().start);
            for n in names_of(r.get_ref(), "evaluation", "an evaluation", &at)? {
                let ev = evaluations.get(n).ok_or_else(|| {
                    anyhow!("{at}: evaluation: no [evaluation.{n}] in the manifest")
                })?;
                if chosen.iter().any(|c: &Evaluation| c.name == n) {
                    bail!("{at}: evaluation: '{n}' is listed twice");
                }
                chosen.push(ev.clone());
            }
        }
        for ev in &chosen {
            let players = match &ev.tournament {
                Some(t) => t
                    .player_names(entry_names)
                    .with_context(|| format!("{name_place}: evaluation.{}", ev.name))?,
                None => entry_names.to_vec(),
            };
            let named = ev.reference.iter().map(|r| ("reference", r)).chain(
                ev.tournament
                    .iter()
                    .flat_map(|t| t.pairs.iter().flatten())
                    .map(|p| ("tournament.pairs", p)),
            );
            for (key, player) in named {
                if !players.contains(player) {
                    bail!(
                        "{name_place}: evaluation.{}.{key}: '{player}' is not a player of experiment '{name}' (players: {})",
                        ev.name,
                        players.join(", ")
                    );
                }
            }
            if let Some([a, b]) = ev
                .tournament
                .iter()
                .flat_map(|t| &t.pairs)
                .find(|[a, b]| a == b)
            {
                bail!(
                    "{name_place}: evaluation.{}.tournament.pairs: ['{a}', '{b}'] pairs a player with itself",
                    ev.name
                );
            }
        }
        Ok(chosen)
    }

    /// The experiment named by `init_from`, which must come before this one (`experiments`)
    /// and have every network of this one (`entry_names`).
    fn init_source(
        &self,
        init_from: Option<&Spanned<String>>,
        experiments: &[Experiment],
        entry_names: &[String],
    ) -> Result<Option<String>> {
        let place = |offset: usize| self.place(offset);
        Ok(match init_from {
            Some(r) => {
                let other = experiments
                    .iter()
                    .find(|x| &x.name == r.get_ref())
                    .ok_or_else(|| {
                        anyhow!(
                            "{}: init_from: no experiment '{}' before this one",
                            place(r.span().start),
                            r.get_ref()
                        )
                    })?;
                let theirs = other.entry_names();
                if let Some(fs) = entry_names.iter().find(|f| !theirs.contains(f)) {
                    bail!(
                        "{}: init_from: experiment '{}' has no network '{fs}'",
                        place(r.span().start),
                        r.get_ref()
                    );
                }
                Some(r.get_ref().clone())
            }
            None => None,
        })
    }
}

/// `listed`, each trimmed, if none is empty or repeated; else the first that is.
fn distinct_names(listed: &[String]) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = Vec::new();
    for name in listed {
        let name = name.trim().to_string();
        if name.is_empty() || names.contains(&name) {
            return Err(name);
        }
        names.push(name);
    }
    Ok(names)
}

/// The experiments one `[[experiment]]` table stands for, each with the name of the table it
/// is a cell of: the table itself, or, when it holds `sweep = { KEY = [values], ... }`, one
/// copy per combination of the values (the grid's cells, later keys varying fastest), each
/// with the swept keys set and named `NAME-V1xV2...` after its values in the keys'
/// alphabetical order (`sweep = { l1 = [256, 512], l2 = [32] }` in experiment `wide`:
/// `wide-256x32`, `wide-512x32`). Every other key of the table is the cells' shared setting;
/// a swept key may not also be set there.
fn sweep_cells(
    table: &Spanned<RawTable>,
    place: &dyn Fn(usize) -> ManifestPlace,
) -> Result<Vec<(RawTable, Option<String>)>> {
    let mut own = table.get_ref().clone();
    let Some(sweep) = own.remove("sweep") else {
        return Ok(vec![(own, None)]);
    };
    let at = place(sweep.span().start);
    let span = sweep.span();
    let Some(name) = own.get("name").and_then(|n| n.get_ref().as_str()) else {
        bail!("{at}: sweep: the experiment needs a name to name its cells");
    };
    let name = name.trim().to_string();
    let toml::Value::Table(grid) = sweep.into_inner() else {
        bail!("{at}: sweep: give a table of keys and their values (sweep = {{ l1 = [256, 512] }})");
    };
    if grid.is_empty() {
        bail!("{at}: sweep: an empty table (leave it out for one experiment)");
    }
    let mut cells: Vec<(RawTable, String)> = vec![(own, name.clone())];
    for (key, values) in grid {
        if ["name", "sweep"].contains(&key.as_str()) {
            bail!("{at}: sweep.{key}: cannot be swept");
        }
        if cells[0].0.contains_key(&key) {
            bail!("{at}: sweep.{key}: is also set in the experiment; set it in one place");
        }
        let toml::Value::Array(values) = values else {
            bail!("{at}: sweep.{key}: give a list of values ({key} = [...])");
        };
        if values.is_empty() {
            bail!("{at}: sweep.{key}: an empty list");
        }
        let mut labels: Vec<String> = Vec::new();
        for v in &values {
            let label = match v {
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                toml::Value::String(t) => t.clone(),
                _ => bail!("{at}: sweep.{key}: values must be numbers, booleans or names"),
            };
            if !crate::file_names::is_plain_name(&label) {
                bail!(
                    "{at}: sweep.{key}: '{label}' cannot be part of a cell's name (letters, digits, '-', '_' or '.')"
                );
            }
            if labels.contains(&label) {
                bail!("{at}: sweep.{key}: {label} is listed twice");
            }
            labels.push(label);
        }
        if key == "train_positions" {
            ladder_rungs(&values).map_err(|m| anyhow!("{at}: sweep.train_positions: {m}"))?;
        }
        let sep = if cells.len() == 1 && cells[0].1 == name {
            "-"
        } else {
            "x"
        };
        let mut next = Vec::with_capacity(cells.len() * values.len());
        for (cell, cell_name) in &cells {
            for (v, label) in values.iter().zip(&labels) {
                let mut cell = cell.clone();
                cell.insert(key.clone(), Spanned::new(span.clone(), v.clone()));
                next.push((cell, format!("{cell_name}{sep}{label}")));
            }
        }
        cells = next;
    }
    let group = Some(name);
    Ok(cells
        .into_iter()
        .map(|(mut cell, cell_name)| {
            let at = cell["name"].span();
            cell.insert(
                "name".to_string(),
                Spanned::new(at, toml::Value::String(cell_name)),
            );
            (cell, group.clone())
        })
        .collect())
}

/// The training positions a generated dataset is asked for (`positions`); none when it is
/// counted in games or named by its files, whose size is known only once they exist.
fn generation_positions(d: &Dataset) -> Option<u64> {
    match &d.source {
        DataSource::Generate(g) => match g.target {
            Target::Positions(p) => Some(p),
            Target::Games(_) => None,
        },
        DataSource::Files { .. } => None,
    }
}

/// Checks the sizes of a data ladder (`sweep = { train_positions = [...] }`): positive whole
/// numbers, smallest first, so that each rung's data holds the one before.
fn ladder_rungs(values: &[toml::Value]) -> Result<(), String> {
    let mut before: Option<i64> = None;
    for v in values {
        let n = match v {
            toml::Value::Integer(n) if *n > 0 => *n,
            _ => return Err(format!("{v} is not a positive number of positions")),
        };
        if let Some(b) = before
            && n <= b
        {
            return Err(format!(
                "{n} after {b}: list a ladder's sizes from the smallest up"
            ));
        }
        before = Some(n);
    }
    Ok(())
}

/// The names a key holds: one name (`"a"`) or a non-empty list of them (`["a", "b"]`); `what`
/// says what one names in errors ("a dataset"), `at` where the key is.
fn names_of<'v>(
    value: &'v toml::Value,
    key: &str,
    what: &str,
    at: &dyn fmt::Display,
) -> Result<Vec<&'v str>> {
    match value {
        toml::Value::String(s) => Ok(vec![s.as_str()]),
        toml::Value::Array(a) if !a.is_empty() => a
            .iter()
            .map(|v| v.as_str())
            .collect::<Option<Vec<&str>>>()
            .ok_or_else(|| anyhow!("{at}: {key}: a list of names holds a non-string")),
        _ => bail!("{at}: {key}: give {what}'s name or a non-empty list of names"),
    }
}

/// Removes `key` from `table` and reads its value as a `T`, keeping its place; an error names
/// the line and the key.
fn take<T: serde::de::DeserializeOwned>(
    table: &mut RawTable,
    key: &str,
    place: &dyn Fn(usize) -> ManifestPlace,
) -> Result<Option<Spanned<T>>> {
    let Some(value) = table.remove(key) else {
        return Ok(None);
    };
    let span = value.span();
    let read = value
        .into_inner()
        .try_into::<T>()
        .map_err(|e| anyhow!("{}: {key}: {}", place(span.start), one_line(e.message())))?;
    Ok(Some(Spanned::new(span, read)))
}

/// Reads a table of settings (`prefix` + key names a key in errors); an error names the line
/// and the key of the value it is about.
fn read_table<T: serde::de::DeserializeOwned>(
    table: RawTable,
    prefix: &str,
    place: &dyn Fn(usize) -> ManifestPlace,
) -> Result<T> {
    let starts: BTreeMap<String, usize> = table
        .iter()
        .map(|(k, v)| (k.clone(), v.span().start))
        .collect();
    let plain: toml::Table = table
        .into_iter()
        .map(|(k, v)| (k, v.into_inner()))
        .collect();
    serde_path_to_error::deserialize(toml::Value::Table(plain)).map_err(|e| {
        let message = one_line(e.inner().message());
        // A bad value's path is its key; an unknown key is named in the message.
        let path = e.path().to_string();
        let key = path
            .split('.')
            .next()
            .filter(|k| starts.contains_key(*k))
            .or_else(|| {
                message
                    .split('`')
                    .nth(1)
                    .filter(|k| starts.contains_key(*k))
            });
        match key {
            Some(k) if message.contains(k) => anyhow!("{}: {prefix}{message}", place(starts[k])),
            Some(k) => anyhow!("{}: {prefix}{k}: {message}", place(starts[k])),
            None => anyhow!(message),
        }
    })
}

/// Reads the keys `T` declares out of `table` as a `T` (see [`read_table`]), leaving the
/// others: a table made of parts that are each declared once, as `generate`'s player and games.
fn read_part<T: serde::de::DeserializeOwned>(
    table: &mut RawTable,
    prefix: &str,
    place: &dyn Fn(usize) -> ManifestPlace,
) -> Result<T> {
    let names = field_names::<T>();
    let (part, rest) = std::mem::take(table)
        .into_iter()
        .partition(|(k, _)| names.contains(&k.as_str()));
    *table = rest;
    read_table(part, prefix, place)
}

/// The key names a derived `Deserialize` struct declares: serde hands them to
/// `deserialize_struct`, which this deserializer records and then refuses.
fn field_names<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    struct Names(&'static [&'static str]);
    #[derive(Debug)]
    struct Recorded;
    impl std::fmt::Display for Recorded {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("field names recorded")
        }
    }
    impl std::error::Error for Recorded {}
    impl serde::de::Error for Recorded {
        fn custom<M: fmt::Display>(_: M) -> Self {
            Recorded
        }
    }
    impl<'de> serde::Deserializer<'de> for &mut Names {
        type Error = Recorded;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Recorded> {
            Err(Recorded)
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Recorded> {
            self.0 = fields;
            Err(Recorded)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut names = Names(&[]);
    let _ = T::deserialize(&mut names);
    names.0
}

/// A message on one line.
fn one_line(message: &str) -> String {
    message.trim().replace('\n', " ")
}

impl GenerateTable {
    /// The number of shards of the training data (1 unless `shards` says more).
    pub fn shard_count(&self) -> u64 {
        self.shards.map_or(1, |s| s.get())
    }

    /// What the generation stage could not use, checked by `trainer run --check` for the
    /// experiments it would run (it reads files and looks for programs, so a manifest stays
    /// loadable on a machine that lacks another experiment's engine): a `net` that is not a
    /// network, a `book` that is not an EPD book, a labeler engine that does not exist, a
    /// `label_net` that is not a network or names an engine that does not exist. The error
    /// starts with the key (`book: ...`).
    pub fn check_inputs(&self) -> Result<()> {
        let (g, player) = (self, &self.player);
        if let Some(net) = &player.net {
            nnue::check_network_file(net).context("net")?;
        }
        if let Some(net) = &g.label.net {
            nnue::check_network_file(net).context("label_net")?;
        }
        if let Some(engine) = &g.label_net_from {
            super::engine_net::locate(engine).context("label_net")?;
        }
        if let Some(book) = &player.book {
            crate::gensfen::read_book(book)
                .map_err(anyhow::Error::msg)
                .context("book")?;
        }
        if let Some(spec) = &player.labeler {
            let spec = arena::uci::EngineSpec::parse(spec)
                .map_err(anyhow::Error::msg)
                .context("labeler")?;
            super::engine_net::locate(&spec.command.to_string_lossy()).context("labeler")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The parser itself, in process: what a table becomes, and where its errors point.

    use super::*;

    /// A folder with a data file and a book, and `text` (after a dataset `d` of those files)
    /// parsed as `DIR/m.toml`.
    fn parse(text: &str) -> (tempfile::TempDir, Result<Manifest>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("d.binpack"), b"").unwrap();
        std::fs::write(dir.path().join("book.epd"), b"8/8/8/8/8/8/8/K1k5 w - -\n").unwrap();
        let full = format!("[data.d]\ntrain = [\"d.binpack\"]\nval = [\"d.binpack\"]\n{text}");
        let parsed = Manifest::parse(&full, &dir.path().join("m.toml"));
        (dir, parsed)
    }

    fn error(text: &str) -> String {
        format!("{:#}", parse(text).1.unwrap_err())
    }

    const ONE: &str = "[[experiment]]\nname = \"x\"\nfeature_sets = [\"all\"]\ndata = \"d\"\n";

    #[test]
    fn defaults_then_the_experiment_then_its_cells() {
        let (_dir, m) = parse(&format!(
            "[defaults]\nlr = 0.001\nepochs = 7\n{ONE}epochs = 9\nsweep = {{ l1 = [64, 128] }}\n"
        ));
        let m = m.unwrap();
        let names: Vec<&str> = m.experiments.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["x-64", "x-128"]);
        for (e, l1) in m.experiments.iter().zip([64, 128]) {
            assert_eq!(e.settings.lr(), 0.001, "from [defaults]");
            assert_eq!(
                e.settings.epochs.get(),
                9,
                "the experiment's over the defaults'"
            );
            assert_eq!(e.settings.l1.get(), l1, "the cell's own");
            assert_eq!(e.group.as_deref(), Some("x"));
        }
        // Paths resolve against the manifest's folder.
        let DataSource::Files { train, .. } = &m.experiments[0].data[0].source else {
            panic!("files");
        };
        assert!(train[0].is_absolute() && train[0].ends_with("d.binpack"));
    }

    #[test]
    fn errors_point_at_the_line_and_name_the_key() {
        // The base is 3 lines of data and 4 of the experiment: line 8 is the first added.
        for (added, line, says) in [
            ("lr = 2\n", 8, "lr:"),
            ("epochs = 0\n", 8, "epochs:"),
            ("nosuchkey = 1\n", 8, "nosuchkey"),
            ("evaluation = \"nope\"\n", 8, "no [evaluation.nope]"),
            ("init_from = \"x\"\n", 8, "init_from"),
        ] {
            let err = error(&format!("{ONE}{added}"));
            assert!(err.contains(&format!("m.toml:{line}")), "{added}: {err}");
            assert!(err.contains(says), "{added}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        let err = error(&ONE.replace("[\"all\"]", "[\"all\", \" all \"]"));
        assert!(err.contains("'all' is empty or listed twice"), "{err}");
    }

    #[test]
    fn generation_and_evaluation_tables_hold_the_domain_types() {
        let text = format!(
            "[data.g]\ngenerate = {{ positions = 500, val_games = 2, nodes = 10, book = \"book.epd\" }}\n\
             [evaluation.v]\ntournament = {{ rounds = 2, tc = \"1:30+1\", openings = \"book.epd\" }}\n\
             puzzles = {{ file = \"book.epd\", depth = 3 }}\n\
             {}evaluation = \"v\"\ntrain_positions = 400\n",
            ONE.replace("data = \"d\"", "data = \"g\"")
        );
        let (_dir, m) = parse(&text);
        let m = m.unwrap();
        let DataSource::Generate(g) = &m.dataset("g").unwrap().source else {
            panic!("generated");
        };
        assert_eq!(g.target, Target::Positions(500));
        let ev = &m.experiments[0].evaluations[0];
        let limit = ev.tournament.as_ref().unwrap().limit;
        assert_eq!(limit.to_string(), "tc 90+1");
        assert_eq!(
            ev.puzzles.as_ref().unwrap().limit,
            MoveLimit::Depth(std::num::NonZeroU32::new(3).unwrap())
        );
        // A rung larger than the dataset's positions is refused where it is written.
        let err = error(&text.replace("train_positions = 400", "train_positions = 600"));
        assert!(err.contains("600 is more than the 500"), "{err}");
    }

    #[test]
    fn passes_set_the_epoch_cap_from_the_positions_the_manifest_knows() {
        let generated = "[data.g]\ngenerate = { positions = 500, val_games = 2, nodes = 10, book = \"book.epd\" }\n";
        let on = |data: &str, extra: &str| {
            format!(
                "{generated}{}passes = 2.5\nepoch_positions = 100\n{extra}",
                ONE.replace("data = \"d\"", &format!("data = \"{data}\""))
            )
        };
        // 2.5 passes over a rung of 400 in epochs of 100: 10 epochs; over the 500 generated: 13.
        let (_dir, m) = parse(&on("g", "train_positions = 400\n"));
        let entry = &m.unwrap().experiments[0].entries()[0];
        assert_eq!(entry.settings.epoch_cap(entry.training_positions()), 10);
        let (_dir, m) = parse(&on("g", ""));
        let e = &m.unwrap().experiments[0];
        let entry = &e.entries()[0];
        assert_eq!(entry.settings.epoch_cap(entry.training_positions()), 13);
        assert!(
            e.settings
                .length_label()
                .starts_with("2.5 passes over the data")
        );
        // Files of unknown size: refused where the experiment is named.
        let err = error(&on("d", ""));
        assert!(
            err.contains("m.toml:7")
                && err.contains("passes: the training positions of dataset 'd'"),
            "{err}"
        );
    }

    #[test]
    fn test_data_is_another_dataset_than_the_validation_one() {
        let text = format!(
            "[data.v]\ntrain = [\"d.binpack\"]\nval = [\"d.binpack\"]\n[data.t]\ntrain = [\"d.binpack\"]\nval = [\"d.binpack\"]\n{ONE}val_data = \"v\"\ntest_data = \"t\"\n"
        );
        let (_dir, m) = parse(&text);
        let e = &m.unwrap().experiments[0];
        assert_eq!(e.test_data.as_ref().map(|t| t.name.as_str()), Some("t"));
        let names: Vec<&str> = e.datasets().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["d", "v", "t"]);
        let err = error(&text.replace("test_data = \"t\"", "test_data = \"v\""));
        assert!(
            err.contains("test_data: 'v' is the validation set too"),
            "{err}"
        );
        let err = error(&text.replace("test_data = \"t\"", "test_data = \"w\""));
        assert!(err.contains("test_data: no [data.w]"), "{err}");
    }

    #[test]
    fn the_player_keys_are_trainer_gensfens_with_its_rule() {
        let with = |keys: &str| {
            format!(
                "[data.g]\ngenerate = {{ games = 4, val_games = 2{keys} }}\n{}",
                ONE.replace("data = \"d\"", "data = \"g\"")
            )
        };
        let player = |keys: &str| {
            let (_dir, m) = parse(&with(keys));
            let m = m.unwrap();
            let DataSource::Generate(g) = &m.dataset("g").unwrap().source else {
                panic!("generated");
            };
            g.player.clone()
        };
        // Neither a depth nor nodes: Stockfish's depth 3, as `trainer gensfen`.
        assert_eq!(player("").depths(), Some((3, 3)));
        assert_eq!(player(", nodes = 50").depths(), None);
        let both = player(", nodes = 50, depth = 2");
        assert_eq!(
            (both.depths(), both.nodes.map(|n| n.get())),
            (Some((2, 2)), Some(50))
        );
        let range = player(", depth_min = 2, depth_max = 4, book = \"book.epd\"");
        assert_eq!(range.depths(), Some((2, 4)));
        assert!(
            range.book.unwrap().is_absolute(),
            "resolved against the manifest"
        );
        for (keys, says) in [
            (
                ", depth = 2, depth_min = 1, depth_max = 3",
                "generate.depth: give a fixed depth",
            ),
            (
                ", depth_min = 2",
                "generate.depth_min: a depth range needs both",
            ),
            (
                ", depth_min = 4, depth_max = 2",
                "generate.depth_min: the depth range 4..=2",
            ),
            (", depth = 300", "generate.depth: 300 is beyond"),
            (
                ", labeler = \"x\"",
                "generate.labeler: an external labeler searches",
            ),
            (
                ", depth = 0",
                "m.toml:5: data.g.generate.depth: must be a positive",
            ),
        ] {
            let err = error(&with(keys));
            assert!(err.contains(says), "{keys}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }

    #[test]
    fn field_names_are_the_keys_a_struct_declares() {
        let names = field_names::<PlayerSettings>();
        assert_eq!(
            names,
            [
                "nodes",
                "depth",
                "depth_min",
                "depth_max",
                "net",
                "book",
                "labeler"
            ]
        );
    }

    #[test]
    fn distinct_names_refuse_the_empty_and_the_repeated() {
        let names =
            |l: &[&str]| distinct_names(&l.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(names(&[" a", "b "]), Ok(vec!["a".into(), "b".into()]));
        assert_eq!(names(&["a", " a"]), Err("a".into()));
        assert_eq!(names(&["a", "  "]), Err(String::new()));
    }
}
