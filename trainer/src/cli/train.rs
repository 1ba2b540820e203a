//! `trainer train`, `trainer export` and `trainer quant-report`.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

use clap::Args;
use nnue::Nnue;
use plugin_api::{FeatureSet, PluginRegistry};

use super::FilterArgs;
use super::device::RuntimeArgs;
use nnue::Shape;
use trainer::checked::{Positive, UnitReal};
use trainer::data::score_units;
use trainer::data::{self, Format, Sample};
use trainer::train::checkpoint;
use trainer::train::config::{DataFile, TrainConfig};
use trainer::train::export::{
    Calibration, calibration_activations, export, fold_factors, network_blocks, quantize_calibrated,
};
use trainer::train::quant::{compare, plot_histogram};
use trainer::train::settings::{MethodName, TrainSettings};
use trainer::train::training_loop::{Runtime, TrainError, TrainState, train};

/// Arguments of `trainer train`.
#[derive(Args, Debug, Clone)]
pub struct TrainArgs {
    /// Feature set: blocks joined by '+' (sum) and '*' (product); a term ending in '^' trains with a factorizer (halfka_v2_hm^, k*all^), folded into an ordinary network on export
    #[arg(long)]
    pub spec: String,
    /// The training settings.
    #[command(flatten)]
    pub settings: TrainSettings,
    /// Training file (repeat for several; format from the extension or --format).
    #[arg(long = "in", value_name = "FILE", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Validation file, held out from training (repeat for several).
    #[arg(long = "val", value_name = "FILE", required = true)]
    pub val: Vec<PathBuf>,
    /// Format of all data files, overriding their extensions.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Start from this checkpoint or network file (weights only) instead of random weights.
    #[arg(long, value_name = "FILE")]
    pub init: Option<PathBuf>,
    /// Export the network every K epochs (the last epoch is always exported).
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub export_every: u64,
    /// Also export at these epochs (comma-separated).
    #[arg(long, value_name = "EPOCHS", value_delimiter = ',')]
    pub export_at: Vec<u64>,
    /// Output folder: checkpoint, metrics, plots, networks.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Continue from the output folder's checkpoint if there is one.
    #[arg(long)]
    pub resume: bool,
    /// Loader threads, progress bar, device and libtorch threads.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
    /// Position filters (--quiet is the thesis's rule) and the seed.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// For tests: abort the process (no clean-up, as a kill would) after this many optimizer
    /// steps.
    #[arg(long, hide = true)]
    pub abort_after_steps: Option<u64>,
}

impl TrainArgs {
    /// The recipe: the training settings, with the position filters and the seed of the
    /// options every data command shares.
    pub fn recipe(&self) -> Result<TrainSettings> {
        let filter = self.filter.config().map_err(anyhow::Error::msg)?;
        let recipe = TrainSettings {
            skip_in_check: filter.skip_in_check,
            skip_capture: filter.skip_capture,
            min_ply: filter.min_ply,
            max_ply: filter.max_ply,
            max_score: match filter.max_score {
                Some(m) => Some(
                    Positive::try_from(i64::from(m))
                        .map_err(|e| anyhow::anyhow!("--max-score: {e}"))?,
                ),
                None => None,
            },
            skip_rate: UnitReal::try_from(filter.skip_rate)
                .map_err(|e| anyhow::anyhow!("--skip-rate: {e}"))?,
            wdl_skip: filter.wdl_skip,
            early_skip_ply: filter.early_skip_ply,
            piece_count_skip: filter.piece_count_skip,
            seed: filter.seed,
            ..self.settings.clone()
        };
        recipe.check().map_err(|e| anyhow::anyhow!("{}", e.0))?;
        Ok(recipe)
    }

    /// The run's configuration for a feature set of `n` features.
    pub fn config(&self, n: usize) -> Result<TrainConfig> {
        let recipe = self.recipe()?;
        let data_units =
            score_units::units_of_files(&self.inputs, self.format).map_err(anyhow::Error::msg)?;
        if let Some(warning) = recipe.units_warning(data_units) {
            eprintln!("{warning}");
        }
        let mut config = TrainConfig::new(
            &recipe,
            &self.spec,
            n,
            (
                DataFile::all(&self.inputs, self.format)?,
                DataFile::all(&self.val, self.format)?,
            ),
            data_units,
        );
        config.init = self.init.clone();
        config.export_every = self.export_every;
        config.export_epochs = self.export_at.clone();
        Ok(config)
    }
}

/// Runs `trainer train`.
pub fn run_train(args: &TrainArgs, set: &FeatureSet) -> Result<()> {
    let device = args.runtime.start()?;
    let config = args.config(set.training_size() as usize)?;
    let rt = Runtime {
        device,
        loader_threads: args.runtime.loader_threads,
        out: args.out.clone(),
        resume: args.resume,
        progress: !args.runtime.no_progress,
        log: true,
        stop_after_steps: args.abort_after_steps,
    };
    match train(config, set, &rt) {
        Ok(outcome) => {
            let history = &outcome.state.history;
            let last = history.last();
            let best = outcome
                .best_epoch
                .checked_sub(1)
                .and_then(|k| history.get(k as usize));
            let config = &outcome.state.config;
            let val_losses: Vec<f64> = history.iter().map(|m| m.val_loss).collect();
            let stopped = match outcome.state.epoch < config.epochs() {
                true => config
                    .stop()
                    .reason(&val_losses)
                    .map(|why| format!(", stopped before the cap of {}: {why}", config.epochs()))
                    .unwrap_or_default(),
                false => String::new(),
            };
            println!(
                "trained {} epochs ({} positions{}{stopped}); best epoch {}: validation loss {} (constant predictor {}); network {} (last epoch: {})",
                outcome.state.epoch,
                last.map_or(0, |m| m.positions),
                if config.recipe.method == MethodName::Pqr {
                    " as triplets"
                } else {
                    ""
                },
                outcome.best_epoch,
                best.map_or("-".into(), |m| format!("{:.6}", m.val_loss)),
                best.map_or("-".into(), |m| format!("{:.6}", m.val_constant)),
                outcome.net.display(),
                outcome.last.display()
            );
            Ok(())
        }
        Err(TrainError::Interrupted { step }) => {
            eprintln!("aborting after step {step} (--abort-after-steps)");
            std::process::abort()
        }
        Err(e) => Err(e.into()),
    }
}

/// Arguments of `trainer export`.
#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    /// A training checkpoint.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: PathBuf,
    /// The network file to write (the project's format, `nnue`).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Calibration positions for the rounding of the hidden and output layers: the first ones
    /// of this data file (without it, every weight is rounded to nearest; the quantization error
    /// is then several times larger).
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,
    /// Format of the data file, overriding its extension.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Number of calibration positions.
    #[arg(long, default_value_t = trainer::train::export::CALIBRATION_POSITIONS)]
    pub calibration: usize,
}

/// The first `n` samples of a data file.
fn read_samples(path: &Path, format: Option<Format>, n: usize) -> Result<Vec<Sample>> {
    Ok(data::first_samples(path, format, n, None)?)
}

/// The calibration activations of `model` on `samples` (encoded through `set`).
fn calibration(
    model: &trainer::model::Model,
    set: &FeatureSet,
    samples: &[Sample],
) -> Result<Calibration> {
    let mut batch = trainer::loader::batch::SparseBatch::with_capacity(set, samples.len());
    let mut scratch = Vec::new();
    for s in samples {
        batch.push(set, &s.board, &mut scratch)?;
    }
    let input = trainer::model::SparseInput::from_batch(&batch);
    Ok(calibration_activations(model, &[&input], samples.len()))
}

/// Reads a checkpoint and its model (CPU).
fn read_checkpoint(path: &Path) -> Result<(TrainState, trainer::model::Model)> {
    let loaded = checkpoint::read::<TrainState>(path)?;
    let model = loaded
        .model(&loaded.state.config.shape(), tch::Device::Cpu)
        .map_err(anyhow::Error::msg)?;
    Ok((loaded.state, model))
}

/// Runs `trainer export` (plugins are needed only to encode calibration positions).
pub fn run_export(args: &ExportArgs, plugin_dir: Option<&Path>) -> Result<()> {
    let (state, model) = read_checkpoint(&args.checkpoint)?;
    // The plugins give the blocks' identities and a factorized set's virtual features.
    let registry = PluginRegistry::discover(plugin_dir)?;
    let set = registry.feature_set(&state.config.feature_set)?;
    let blocks = network_blocks(&set, &state.config.i8_blocks())?;
    if blocks != state.block_infos()? {
        bail!(
            "{}: the loaded plugins' blocks of '{}' differ from the checkpoint's (another layout version?)",
            args.checkpoint.display(),
            set.name()
        );
    }
    let x = match &args.data {
        Some(path) if args.calibration > 0 => {
            let samples = read_samples(path, args.format, args.calibration)?;
            calibration(&model, &set, &samples)?
        }
        _ => {
            eprintln!("note: no calibration data (--data): rounding every weight to nearest");
            calibration_activations(&model, &[], 0)
        }
    };
    let units = state.config.score_units;
    let net = export(&model, &set, (blocks, units), &x, &args.out)?;
    println!(
        "wrote {} ({}, feature set {}, epoch {})",
        args.out.display(),
        Shape::new(net.n(), net.l1(), net.arch().clone()),
        net.feature_set(),
        state.epoch
    );
    Ok(())
}

/// Arguments of `trainer quant-report`.
#[derive(Args, Debug, Clone)]
pub struct QuantArgs {
    /// A training checkpoint (the float model).
    #[arg(long, value_name = "FILE")]
    pub checkpoint: PathBuf,
    /// Compare with this exported network file instead of quantizing the checkpoint in memory.
    #[arg(long, value_name = "FILE")]
    pub net: Option<PathBuf>,
    /// Positions: the first ones of this data file.
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,
    /// Format of the data file, overriding its extension.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Number of positions compared (after the calibration positions).
    #[arg(long, default_value_t = 50_000)]
    pub positions: usize,
    /// Calibration positions for quantizing the checkpoint (the first ones of the data file;
    /// the comparison uses the positions after them). 0: round every weight to nearest.
    #[arg(long, default_value_t = trainer::train::export::CALIBRATION_POSITIONS)]
    pub calibration: usize,
    /// Folder for the histogram (quant-error.svg) and the report (quant-report.json).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Kernels of the quantized evaluation (scalar, avx2, avx512, avx512vnni; default: the best).
    #[arg(long)]
    pub simd: Option<String>,
}

/// Runs `trainer quant-report`.
pub fn run_quant(args: &QuantArgs, registry: &PluginRegistry) -> Result<()> {
    let (state, model) = read_checkpoint(&args.checkpoint)?;
    // A factorized model is compared (and quantized) as the plain model it exports to.
    let trained = registry.feature_set(&state.config.feature_set)?;
    let model = fold_factors(&model, &trained)?.unwrap_or(model);
    let set = registry.feature_set(trained.plain_name())?;
    let cal = if args.net.is_some() {
        0
    } else {
        args.calibration
    };
    let mut samples = read_samples(&args.data, args.format, cal + args.positions)?;
    if samples.len() <= cal {
        bail!(
            "{}: only {} positions, not more than the {cal} calibration positions",
            args.data.display(),
            samples.len()
        );
    }
    let samples = samples.split_off(cal.min(samples.len()));
    let nnue = match &args.net {
        Some(path) => {
            let nnue = Nnue::load(path, registry)?;
            let net = nnue.network();
            if (net.n(), net.l1(), net.arch()) != (model.shape.n, model.shape.l1, model.arch()) {
                bail!(
                    "{}: the network is N {} -> L1 {}, {}; the checkpoint's model is N {} -> L1 {}, {}",
                    path.display(),
                    net.n(),
                    net.l1(),
                    net.arch(),
                    model.shape.n,
                    model.shape.l1,
                    model.arch()
                );
            }
            nnue
        }
        None => {
            let cal_samples = read_samples(&args.data, args.format, cal)?;
            let x = calibration(&model, &set, &cal_samples)?;
            let blocks = network_blocks(&set, &state.config.i8_blocks())?;
            let net = quantize_calibrated(&model, set.name(), blocks, &x)?;
            Nnue::bind(net, "(quantized checkpoint)", registry)?
        }
    };
    let kernels = super::kernels(args.simd.as_deref())?;
    let report = compare(&model, &nnue, kernels, &samples)?;
    println!("{report}");
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        plot_histogram(&report, &dir.join("quant-error.svg"))?;
        let json = serde_json::to_string_pretty(&report)?;
        trainer::atomic_file::write_atomic(&dir.join("quant-report.json"), json.as_bytes())?;
        println!(
            "wrote {} and {}",
            dir.join("quant-error.svg").display(),
            dir.join("quant-report.json").display()
        );
    }
    Ok(())
}
