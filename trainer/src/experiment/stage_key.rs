//! What names a stage's output folder: one explicit key per kind of stage, built in one place.
//!
//! A key is the SHA-256 of the stage's inputs serialized as JSON, behind a tag naming the kind
//! and its key's version. Every file a stage reads is in its key by
//! [`file_identity`]: its path relative to the output folder when another stage wrote it, its
//! contents otherwise, so that neither where the output folder lies nor where the manifest,
//! its book or its networks lie changes a key (a cluster's output copied home finds its
//! stages). `trainer/tests/stage_keys.rs` pins in golden files the keys of fixed inputs and
//! the folders of the repository's `experiments.toml`: a change to a key's inputs (a field
//! added to a setting without `skip_serializing_if`, say) fails a test, and a deliberate one
//! is a visible edit of a golden file.

use anyhow::Result;
use std::path::{Path, PathBuf};

use super::cache::{file_digest, file_identity, key_of, stage_dir};
use super::manifest::{GenerateTable, PuzzlesTable, SpeedTable, TournamentTable};
use crate::train::config::TrainConfig;

/// The inputs a stage's output depends on, each file by identity.
#[derive(Clone, Debug, PartialEq)]
pub enum StageKey {
    /// A generated dataset: its generation settings, threads aside (they change only the
    /// speed, never the files), its book and networks by identity.
    Data {
        /// The settings as keyed.
        generation: Box<GenerateTable>,
    },
    /// A ladder's rung: the first `positions` positions of a dataset's training files.
    FirstPositions {
        /// The training files' identities, in order.
        train: Vec<String>,
        /// How many positions.
        positions: u64,
    },
    /// A training run: its [identity](TrainConfig::identity) (so asking for more epochs or
    /// another patience continues the run) without its files, which follow by identity.
    Train {
        /// The run's identity, files cleared.
        run: Box<TrainConfig>,
        /// Each block's `name:layout_version:layout_id`.
        layouts: Vec<String>,
        /// The initial weights' digest (`init_from`).
        init: Option<String>,
        /// Training then validation files: identity and format.
        data: Vec<(String, String)>,
    },
    /// A speed measurement of networks.
    Speed {
        /// Each player's name and network digest.
        networks: Vec<(String, String)>,
        /// The settings.
        speed: SpeedTable,
    },
    /// A tournament between networks (and extra players).
    Tournament {
        /// Each player's name and network digest.
        networks: Vec<(String, String)>,
        /// The extra players: a file's digest, else the engine spec as written.
        extra: Vec<String>,
        /// The settings, the openings by identity.
        table: TournamentTable,
        /// The player rated 0.
        reference: Option<String>,
    },
    /// One network's puzzle accuracy.
    Puzzles {
        /// The network's digest.
        network: String,
        /// The settings, the puzzle file by identity.
        table: PuzzlesTable,
    },
}

/// `path`'s [`file_identity`] as a string in a setting's place.
fn identity_of(path: &str, out: &Path) -> Result<String> {
    file_identity(Path::new(path), out)
}

impl StageKey {
    /// The key of a dataset generated with `g` (paths already resolved).
    pub fn data(g: &GenerateTable, out: &Path) -> Result<StageKey> {
        let mut keyed = g.clone();
        keyed.threads = 0;
        let files = [
            &mut keyed.player.net,
            &mut keyed.player.book,
            &mut keyed.label.net,
        ];
        for p in files.into_iter().flatten() {
            *p = PathBuf::from(file_identity(p, out)?);
        }
        Ok(StageKey::Data {
            generation: Box::new(keyed),
        })
    }

    /// The key of the first `positions` positions of the training files `train`.
    pub fn first_positions(train: &[PathBuf], positions: u64, out: &Path) -> Result<StageKey> {
        let train = train
            .iter()
            .map(|p| file_identity(p, out))
            .collect::<Result<_>>()?;
        Ok(StageKey::FirstPositions { train, positions })
    }

    /// The key of the training run `config` of a feature set whose blocks have `layouts`.
    pub fn train(config: &TrainConfig, layouts: Vec<String>, out: &Path) -> Result<StageKey> {
        let init = config.init.as_deref().map(file_digest).transpose()?;
        let data = config
            .train
            .iter()
            .chain(&config.val)
            .map(|f| Ok((file_identity(&f.path, out)?, f.format.clone())))
            .collect::<Result<_>>()?;
        let mut run = config.identity();
        run.init = None;
        run.train.clear();
        run.val.clear();
        Ok(StageKey::Train {
            run: Box::new(run),
            layouts,
            init,
            data,
        })
    }

    /// The key of the speed measurement `speed` of `networks` (name, digest).
    pub fn speed(networks: &[(String, String)], speed: &SpeedTable) -> StageKey {
        StageKey::Speed {
            networks: networks.to_vec(),
            speed: speed.clone(),
        }
    }

    /// The key of the tournament `t` of `networks` (name, digest) rated against `reference`.
    pub fn tournament(
        t: &TournamentTable,
        networks: &[(String, String)],
        reference: Option<&str>,
        out: &Path,
    ) -> Result<StageKey> {
        let extra = t
            .players
            .iter()
            .map(|text| match Path::new(text).is_file() {
                true => identity_of(text, out),
                false => Ok(text.clone()),
            })
            .collect::<Result<_>>()?;
        let mut table = t.clone();
        table.openings = identity_of(&t.openings, out)?;
        table.players.clear();
        Ok(StageKey::Tournament {
            networks: networks.to_vec(),
            extra,
            table,
            reference: reference.map(str::to_string),
        })
    }

    /// The key of the puzzles `pz` solved by the network of digest `network`.
    pub fn puzzles(pz: &PuzzlesTable, network: &str, out: &Path) -> Result<StageKey> {
        let mut table = pz.clone();
        table.file = identity_of(&pz.file, out)?;
        Ok(StageKey::Puzzles {
            network: network.to_string(),
            table,
        })
    }

    /// The folder of the stage's kind under the output folder (`data`, `train`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            StageKey::Data { .. } | StageKey::FirstPositions { .. } => "data",
            StageKey::Train { .. } => "train",
            StageKey::Speed { .. } => "speed",
            StageKey::Tournament { .. } => "tournament",
            StageKey::Puzzles { .. } => "puzzles",
        }
    }

    /// The key: 16 hex digits of the SHA-256 of the tag and the inputs. A tag's version goes
    /// up when the same inputs must no longer find an old stage (its record changed meaning).
    pub fn key(&self) -> String {
        match self {
            // v2: book and networks by identity (v1: by path as resolved).
            StageKey::Data { generation } => key_of(&("gensfen-v2", generation)),
            StageKey::FirstPositions { train, positions } => {
                key_of(&("first-positions-v1", train, positions))
            }
            // v3: the record's network is the best epoch's (v2's was the last epoch's).
            StageKey::Train {
                run,
                layouts,
                init,
                data,
            } => key_of(&("train-v3", run, layouts, init, data)),
            StageKey::Speed { networks, speed } => key_of(&("speed-v1", networks, speed)),
            // v2: openings and extra players' files by identity (v1: openings by path), the
            // move limit as its one key (v1: all four, three of them null).
            StageKey::Tournament {
                networks,
                extra,
                table,
                reference,
            } => key_of(&("tournament-v2", networks, extra, table, reference)),
            // v2: the puzzle file by identity (v1: by path), the move limit as its one key.
            StageKey::Puzzles { network, table } => key_of(&("puzzles-v2", network, table)),
        }
    }

    /// The stage's folder under the output folder `out`: `out/KIND/NAME-KEY`.
    pub fn dir(&self, out: &Path, name: &str) -> PathBuf {
        stage_dir(out, self.kind(), name, &self.key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checked::{Count, L1Width, Positive, UnitReal};
    use crate::experiment::manifest::{DataSource, Manifest};
    use crate::train::config::DataFile;
    use crate::train::settings::TrainSettings;

    #[test]
    fn every_input_changes_its_key() {
        let out = Path::new("/out");
        let speed: SpeedTable = toml::from_str("depth = 4\n").unwrap();
        let other: SpeedTable = toml::from_str("depth = 5\n").unwrap();
        let nets = [("a".to_string(), "0011".to_string())];
        let more = [("a".to_string(), "0012".to_string())];
        let base = StageKey::speed(&nets, &speed).key();
        assert_ne!(base, StageKey::speed(&nets, &other).key());
        assert_ne!(base, StageKey::speed(&more, &speed).key());
        let train = [out.join("data/x/train.binpack")];
        assert_ne!(
            StageKey::first_positions(&train, 10, out).unwrap().key(),
            StageKey::first_positions(&train, 11, out).unwrap().key()
        );
        // A book by content: the same file under two names is one key.
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (dir.path().join("one.epd"), dir.path().join("two.epd"));
        std::fs::write(&one, "8/8/8/8/8/8/8/K1k5 w - -\n").unwrap();
        std::fs::write(&two, "8/8/8/8/8/8/8/K1k5 w - -\n").unwrap();
        let table = |book: &Path| -> GenerateTable {
            let text = format!(
                "[data.d]\ngenerate = {{ games = 3, val_games = 1, nodes = 10, seed = 1, threads = 1, book = \"{}\" }}\n[[experiment]]\nname = \"e\"\nfeature_sets = [\"all\"]\ndata = \"d\"\n",
                book.display()
            );
            let manifest = Manifest::parse(&text, Path::new("m.toml")).unwrap();
            match &manifest.dataset("d").unwrap().source {
                DataSource::Generate(g) => (**g).clone(),
                DataSource::Files { .. } => panic!("a generated dataset"),
            }
        };
        assert_eq!(
            StageKey::data(&table(&one), out).unwrap(),
            StageKey::data(&table(&two), out).unwrap()
        );
        std::fs::write(&two, "8/8/8/8/8/8/8/K2k4 w - -\n").unwrap();
        let fresh = dir.path().join("three.epd");
        std::fs::rename(&two, &fresh).unwrap();
        assert_ne!(
            StageKey::data(&table(&one), out).unwrap().key(),
            StageKey::data(&table(&fresh), out).unwrap().key()
        );
    }

    /// A training stage's key, pinned on its own: an accidental change of a run's identity (a
    /// new setting written into runs that do not use it, a renamed field) fails here; a
    /// deliberate one is a visible edit of [`GOLDEN_TRAIN_KEY`].
    #[test]
    fn the_training_key_of_a_fixed_run_is_pinned() {
        let out = Path::new("/out");
        let settings = TrainSettings {
            l1: L1Width::new(128),
            l2: Count::new(16),
            epochs: Count::new(12),
            ..TrainSettings::default()
        };
        let files = |name: &str| DataFile::all(&[out.join(name)], None).unwrap();
        let config = |s: &TrainSettings, data: &str| {
            TrainConfig::new(
                s,
                "all",
                768,
                (files(data), Vec::new()),
                nnue::units::ScoreUnits::Centipawns,
            )
        };
        let layouts = || vec!["all:1:0123456789abcdef".to_string()];
        let key =
            |c: &TrainConfig, layouts: Vec<String>| StageKey::train(c, layouts, out).unwrap().key();
        let pinned = key(&config(&settings, "data/d-1/train.binpack"), layouts());
        assert_eq!(pinned, GOLDEN_TRAIN_KEY);
        // The settings added since (issue 44) leave no trace in runs that do not use them, so
        // those runs kept the identity they had (only the tag moved to v3).
        let identity =
            serde_json::to_string(&config(&settings, "data/d-1/train.binpack").identity()).unwrap();
        for added in [
            "stop",
            "lr_schedule",
            "lr_floor",
            "warmup_steps",
            "lambda_end",
            "weight_decay",
            "max_grad_norm",
            "ranger",
            "wdl_skip",
            "early_skip_ply",
            "piece_count_skip",
            "swa_from",
        ] {
            assert!(!identity.contains(added), "{added} in {identity}");
        }
        // The first layer's start is: the default's is named, the thesis's (the only start
        // before the setting) is left out, so that the thesis's runs kept their keys.
        assert!(
            identity.contains("\"first_layer_init\":\"nnue-pytorch\""),
            "{identity}"
        );
        let thesis = TrainSettings {
            base_recipe: crate::train::settings::BaseRecipe::Thesis,
            ..settings.clone()
        };
        let thesis_identity =
            serde_json::to_string(&config(&thesis, "data/d-1/train.binpack").identity()).unwrap();
        assert!(
            !thesis_identity.contains("first_layer_init"),
            "{thesis_identity}"
        );
        // How long it trains is not its identity: more epochs or a patience continue it.
        let longer = TrainSettings {
            epochs: Count::new(40),
            patience: Some(Positive::new(3)),
            min_delta: UnitReal::new(1e-4),
            ..settings.clone()
        };
        assert_eq!(
            key(&config(&longer, "data/d-1/train.binpack"), layouts()),
            pinned
        );
        // Everything else is: the recipe, the data, the layouts.
        let recipe = TrainSettings {
            lr_schedule: crate::train::schedule::LrSchedule::Cosine,
            ..settings.clone()
        };
        assert_ne!(
            key(&config(&recipe, "data/d-1/train.binpack"), layouts()),
            pinned
        );
        assert_ne!(
            key(&config(&settings, "data/d-2/train.binpack"), layouts()),
            pinned
        );
        assert_ne!(
            key(&config(&settings, "data/d-1/train.binpack"), Vec::new()),
            pinned
        );
    }

    /// [`the_training_key_of_a_fixed_run_is_pinned`]'s run's key (moved when the configuration
    /// became the recipe plus its data, when the default rate became nnue-pytorch's, and when
    /// its first-layer start did; issue 63).
    const GOLDEN_TRAIN_KEY: &str = "2d2bc44805aefc36";
}
